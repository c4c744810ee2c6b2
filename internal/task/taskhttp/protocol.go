package taskhttp

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// Operations a host protocol reports to decoders and renderers as
// ctx.operation, named after the OpenAI client methods they serve.
const (
	opCreate   = "create"
	opGenerate = "generate"
	opEdit     = "edit"
	opRetrieve = "retrieve"
)

// ServeProtocol serves a host-protocol request (std_responses, std_image,
// std_video; alias spellings accepted) for model when an enabled plugin of
// the current generation claims it. It reports false, having written
// nothing, when no plugin claims the model, so the caller can fall back to
// the ordinary relay. body is the request body, already read.
func (h *Handlers) ServeProtocol(w http.ResponseWriter, r *http.Request, protocol, model string, body []byte) bool {
	name, ok := manifest.CanonicalProtocol(protocol)
	gen := h.core.Generation()
	if !ok || gen == nil || model == "" {
		return false
	}
	claimers := gen.ProtocolPlugins(name, model)
	if len(claimers) == 0 {
		return false
	}
	pc := &protoCall{h: h, gen: gen, protocol: name, operation: operationOf(name, r), model: model, w: w, r: r}
	pc.serve(claimers, body)
	return true
}

// operationOf names what a protocol request does.
func operationOf(protocol string, r *http.Request) string {
	if protocol == manifest.ProtocolImage {
		if strings.HasSuffix(strings.TrimRight(r.URL.Path, "/"), "/edits") {
			return opEdit
		}
		return opGenerate
	}
	return opCreate
}

// protoCall is one host-protocol request, pinned to the generation it
// started on.
type protoCall struct {
	h         *Handlers
	gen       *plugin.Generation
	protocol  string
	operation string
	model     string
	// mode is the std_responses mode of the request; empty otherwise.
	mode string
	w    http.ResponseWriter
	r    *http.Request
	p    *auth.Principal
	body decodedBody
}

// candidate is a plugin that claims the request's protocol and model.
type candidate struct {
	l       *plugin.Loaded
	claim   manifest.ProtocolClaim
	intent  map[string]any
	origins []*task.Task
	failure string
}

func (pc *protoCall) serve(claimers []*plugin.Loaded, raw []byte) {
	defer func() { _ = pc.body.Close() }()
	var err error
	switch pc.protocol {
	case manifest.ProtocolImage:
		err = pc.serveImage(claimers, raw)
	case manifest.ProtocolResponses:
		err = pc.serveResponses(claimers, raw)
	default:
		err = pc.serveVideo(claimers, raw)
	}
	pc.fail(err)
}

// fail writes err in the OpenAI dialect; nil writes nothing.
func (pc *protoCall) fail(err error) {
	if err == nil {
		return
	}
	e := ir.As(err)
	if e.Status >= 500 && e.Code != "task_timeout" {
		pc.h.log.Warn("host protocol request failed", "protocol", pc.protocol, "model", pc.model, "code", e.Code, "err", err)
	}
	writeOpenAIError(pc.w, e)
}

// admit authenticates the key and checks it may use the model.
func (pc *protoCall) admit() error {
	if pc.p == nil {
		p, err := pc.h.authenticate(pc.r)
		if err != nil {
			return err
		}
		pc.p = p
	}
	if !pc.p.Allows(pc.model) {
		return &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "model_not_allowed", Message: fmt.Sprintf("this API key may not use model %s", pc.model)}
	}
	return nil
}

// readBody decodes raw into the body union and checks its kind against the
// kinds the endpoint takes.
func (pc *protoCall) readBody(raw []byte, kinds ...string) error {
	body, err := decodeBody(pc.r.Header.Get("Content-Type"), raw)
	if err != nil {
		return err
	}
	kind, _ := body.Value["kind"].(string)
	if !slices.Contains(kinds, kind) {
		return ir.BadRequest("invalid_request", "%s takes a %s body", pc.r.URL.Path, strings.Join(kinds, " or "))
	}
	pc.body = body
	return nil
}

// candidates lists the claims of the plugins, keeping those whose declared
// modes fit the request. No hook runs here.
func (pc *protoCall) candidates(claimers []*plugin.Loaded) ([]*candidate, error) {
	var out []*candidate
	for _, l := range claimers {
		claim, ok := l.Manifest.Protocol(pc.protocol)
		if !ok || (pc.mode != "" && !claim.SupportsMode(pc.mode)) {
			continue
		}
		out = append(out, &candidate{l: l, claim: claim})
	}
	if len(out) == 0 {
		return nil, ir.BadRequest("unsupported_mode", "model %s does not support %s requests here", pc.model, modeWords(pc.mode))
	}
	return out, nil
}

func modeWords(mode string) string {
	switch mode {
	case manifest.ModeStream:
		return "streamed (stream: true)"
	case manifest.ModeBackground:
		return "background (background: true)"
	}
	return "synchronous"
}

// decodeContext is the protocol decode context of PLUGIN-CONTEXT.md.
func (pc *protoCall) decodeContext(upstreamModel string) map[string]any {
	m := map[string]any{"method": pc.r.Method, "path": pc.r.URL.Path, "params": map[string]any{},
		"query": queryValues(pc.r.URL.Query()), "body": pc.body.Value, "protocol": pc.protocol,
		"operation": pc.operation, "model": pc.model, "stream": pc.mode == manifest.ModeStream}
	if upstreamModel != "" {
		m["upstreamModel"] = upstreamModel
	}
	return m
}

// decode runs one candidate's decoder and checks that it returned a submit
// intent for the pinned model.
func (pc *protoCall) decode(ctx context.Context, c *candidate, upstreamModel string) (map[string]any, string) {
	v, err := call(ctx, c.l, c.claim.HookPath(manifest.HookDecodeRequest), pc.decodeContext(upstreamModel))
	if err != nil {
		return nil, task.HookMessage(err)
	}
	intent, ok := v.(map[string]any)
	if !ok || intent["kind"] != "submit" {
		return nil, `decodeRequest must return a submit intent {kind:"submit", model, …}`
	}
	if m, _ := intent["model"].(string); m != "" && m != pc.model {
		return nil, fmt.Sprintf("the decoder chose model %s, but the request is for %s", task.Truncate(m, 80), pc.model)
	}
	return intent, ""
}

// eligible decodes the request with every candidate and keeps those that
// accept it; when none does, the error lists every failure once, with the
// plugins that gave it.
func (pc *protoCall) eligible(ctx context.Context, cands []*candidate) ([]*candidate, error) {
	var ok []*candidate
	for _, c := range cands {
		c.intent, c.failure = pc.decode(ctx, c, "")
		if c.failure == "" {
			var err error
			if c.origins, err = pc.h.core.OriginTasks(ctx, pc.p, c.l.Key, c.intent["originTaskIds"]); err != nil {
				c.failure = ir.As(err).Message
			}
		}
		if c.failure == "" {
			ok = append(ok, c)
		}
	}
	if len(ok) > 0 {
		return ok, nil
	}
	return nil, ir.BadRequest("invalid_request", "%s", groupFailures(cands))
}

// groupFailures words the decoders' refusals, identical messages once.
func groupFailures(cands []*candidate) string {
	var order []string
	keys := map[string][]string{}
	for _, c := range cands {
		if _, seen := keys[c.failure]; !seen {
			order = append(order, c.failure)
		}
		keys[c.failure] = append(keys[c.failure], c.l.Key)
	}
	parts := make([]string, len(order))
	for i, msg := range order {
		parts[i] = fmt.Sprintf("%s (%s)", msg, strings.Join(keys[msg], ", "))
	}
	return "the request was refused: " + strings.Join(parts, "; ")
}

// choose selects the channel among those bound to the eligible plugins; the
// channel decides the plugin, whose further channels are the retries.
func (pc *protoCall) choose(table *routing.Table, cands []*candidate) (*candidate, []*routing.Channel) {
	byKey := map[string]*candidate{}
	for _, c := range cands {
		byKey[c.l.Key] = c
	}
	owner := func(ch *routing.Channel) *candidate {
		l, err := pc.gen.ForChannelModel(&ch.Channel, pc.model)
		if err != nil {
			return nil
		}
		c := byKey[l.Key]
		if c == nil || c.l != l || (len(c.origins) > 0 && c.origins[0].ChannelID != ch.ID) {
			return nil
		}
		return c
	}
	first := pc.h.core.Plan(table, pc.p.Group, pc.model, 1, func(ch *routing.Channel) bool { return owner(ch) != nil })
	if len(first) == 0 {
		return nil, nil
	}
	c := owner(first[0])
	plan := []*routing.Channel{first[0]}
	retries := pc.h.core.RetryCount()
	rest := pc.h.core.Plan(table, pc.p.Group, pc.model, retries+1, func(ch *routing.Channel) bool {
		return ch.ID != first[0].ID && owner(ch) == c
	})
	return c, append(plan, rest[:min(len(rest), retries)]...)
}

// submit runs candidate decoding, channel selection, the executing
// plugin's second decode and the ordinary submit path.
func (pc *protoCall) submit(claimers []*plugin.Loaded, extra map[string]any) (*task.Submitted, *candidate, error) {
	ctx := pc.r.Context()
	cands, err := pc.candidates(claimers)
	if err != nil {
		return nil, nil, err
	}
	if cands, err = pc.eligible(ctx, cands); err != nil {
		return nil, nil, err
	}
	// One routing snapshot decides the plugin, plans the retries and
	// admits the submission, as a chat call pins one.
	table := pc.h.core.Table()
	c, plan := pc.choose(table, cands)
	if c == nil {
		return nil, nil, &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "model_not_available",
			Message: fmt.Sprintf("no available channel serves model %s", pc.model)}
	}
	intent, failure := pc.decode(ctx, c, plan[0].MapModel(pc.model))
	if failure != "" {
		return nil, nil, ir.BadRequest("invalid_request", "%s", failure)
	}
	c.intent = intent
	action, _ := intent["action"].(string)
	if action == "" {
		action = pc.operation
	}
	files, _ := pc.body.Value["files"].([]any)
	if files == nil {
		files = []any{}
	}
	sub := task.Submission{Header: pc.w.Header(), Table: table, Generation: pc.gen, Plugin: c.l, Principal: pc.p, Model: pc.model, Action: action,
		Body: intent["requestBody"], Headers: requestHeaders(pc.r.Header), Files: files, Resolver: pc.body.Files,
		Origins: c.origins, Retain: pc.protocol != manifest.ProtocolImage, Channels: plan, LogExtra: extra}
	out, err := pc.h.core.Submit(ctx, sub)
	return out, c, err
}

// renderContext is what protocol renderers see of the request: never
// credentials, never origin tasks.
func (pc *protoCall) renderContext(requestBody any) map[string]any {
	m := map[string]any{"method": pc.r.Method, "path": pc.r.URL.Path, "params": map[string]any{},
		"query": queryValues(pc.r.URL.Query()), "protocol": pc.protocol, "operation": pc.operation,
		"model": pc.model, "stream": pc.mode == manifest.ModeStream}
	if requestBody != nil {
		m["requestBody"] = requestBody
	}
	return m
}

// withArtifacts adds ctx.artifacts[key] = {url, type, mimeType} for a
// successful task whose plugin lists artifacts.
func (h *Handlers) withArtifacts(ctx context.Context, rctx map[string]any, t *task.Task) {
	if t.Status != task.StatusSuccess {
		return
	}
	links, err := h.core.ArtifactLinks(ctx, t)
	if err != nil {
		h.log.Warn("listing a task's artifacts for a render failed", "task", t.PublicID, "err", err)
		return
	}
	if len(links) == 0 {
		return
	}
	m := make(map[string]any, len(links))
	for _, a := range links {
		m[a.Key] = map[string]any{"url": a.URL, "type": a.Type, "mimeType": a.MIMEType}
	}
	rctx["artifacts"] = m
}

// claimFor returns a stored task's plugin and its claim of protocol when
// the claim covers the task's model: only such tasks are served by the
// protocol's retrieval endpoints.
func (h *Handlers) claimFor(ctx context.Context, t *task.Task, protocol string) (*plugin.Loaded, manifest.ProtocolClaim, bool) {
	l, ok := h.core.PluginFor(ctx, t)
	if !ok {
		return nil, manifest.ProtocolClaim{}, false
	}
	claim, ok := l.Manifest.Protocol(protocol)
	if !ok {
		return nil, claim, false
	}
	models := claim.Models
	if len(models) == 0 {
		models = l.Manifest.Models
	}
	return l, claim, slices.Contains(models, t.Model)
}

// openAIStatus maps the seven task statuses onto the OpenAI job statuses.
// UNKNOWN is still running as far as the client can tell.
func openAIStatus(status string) string {
	switch status {
	case task.StatusSuccess:
		return "completed"
	case task.StatusFailure:
		return "failed"
	case task.StatusInProgress, task.StatusUnknown:
		return "in_progress"
	}
	return "queued"
}
