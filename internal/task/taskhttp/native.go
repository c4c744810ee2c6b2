package taskhttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/apijson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// NativeHandler serves plugin-defined routes. A request no route matches
// gets a 404 in the OpenAI dialect; use ServeNative to fall back instead.
func (h *Handlers) NativeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.ServeNative(w, r) {
			writeOpenAIError(w, &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "not_found",
				Message: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)})
		}
	})
}

// ServeNative serves r when a native route of the current generation
// matches it, and reports false (writing nothing) otherwise.
func (h *Handlers) ServeNative(w http.ResponseWriter, r *http.Request) bool {
	gen := h.core.Generation()
	if gen == nil {
		return false
	}
	entry, params, ok := gen.MatchRoute(r.Method, r.URL.Path)
	if !ok {
		return false
	}
	nr := &nativeRequest{h: h, gen: gen, entry: entry, params: params, r: r, w: w}
	nr.serve()
	return true
}

// nativeRequest is one request on a native route, pinned to the generation
// it matched in.
type nativeRequest struct {
	h      *Handlers
	gen    *plugin.Generation
	entry  *plugin.RouteEntry
	params map[string]string
	r      *http.Request
	w      http.ResponseWriter
	p      *auth.Principal
}

func (n *nativeRequest) plugin() *plugin.Loaded { return n.entry.Plugin }

func (n *nativeRequest) serve() {
	p, err := n.h.authenticate(n.r)
	if err != nil {
		n.fail(err)
		return
	}
	n.p = p
	if n.entry.Route.Type == manifest.RouteQuery {
		n.fail(n.query(n.routeTaskID()))
		return
	}
	n.fail(n.decodeAndRun())
}

// authenticate reads the API key from a Bearer header, x-api-key,
// x-alt-api-key / x-goog-api-key, or the key query parameter.
func (h *Handlers) authenticate(r *http.Request) (*auth.Principal, error) {
	key := auth.BearerToken(r)
	for _, h := range []string{"X-Api-Key", "X-Alt-Api-Key", "X-Goog-Api-Key"} {
		if key == "" {
			key = strings.TrimSpace(r.Header.Get(h))
		}
	}
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	return h.d.Keys.Authenticate(r.Context(), key)
}

func (n *nativeRequest) routeTaskID() string {
	name := n.entry.Route.TaskIDParam
	if name == "" {
		name = manifest.DefaultTaskIDParam
	}
	if v := n.params[name]; v != "" {
		return v
	}
	return n.r.URL.Query().Get(name)
}

// decodeAndRun reads the body, runs the route's decoder and acts on the
// intent it returns.
func (n *nativeRequest) decodeAndRun() error {
	raw, err := io.ReadAll(http.MaxBytesReader(n.w, n.r.Body, n.h.opts.BodyLimit))
	if err != nil {
		return &ir.Error{Status: 413, Kind: ir.KindRequestTooLarge, Code: "body_too_large", Message: "the request body is too large"}
	}
	body, err := decodeBody(n.r.Header.Get("Content-Type"), raw)
	if err != nil {
		return err
	}
	defer body.Close()
	dctx := map[string]any{"method": n.r.Method, "path": n.r.URL.Path, "params": stringMap(n.params),
		"query": queryValues(n.r.URL.Query()), "body": body.Value}
	v, err := call(n.r.Context(), n.plugin(), n.entry.Route.DecodeHook(), dctx)
	if err != nil {
		return task.HookError(400, "invalid_request", err)
	}
	intent, _ := v.(map[string]any)
	switch intent["kind"] {
	case "submit":
		return n.submit(intent, body)
	case "query":
		return n.queryIntent(intent)
	}
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "invalid_plugin_result",
		Message: `the route decoder must return {kind:"submit", …} or {kind:"query", …}`}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (n *nativeRequest) submit(intent map[string]any, body decodedBody) error {
	sub, err := n.submission(intent, body)
	if err != nil {
		return err
	}
	out, err := n.h.core.Submit(n.r.Context(), sub)
	if err != nil {
		return err
	}
	view := out.Task.View()
	view["data"] = out.Data
	return n.render(view, sub.Body)
}

// submission checks a submit intent: the model against the route and the
// key, the origin tasks against ownership.
func (n *nativeRequest) submission(intent map[string]any, body decodedBody) (task.Submission, error) {
	model, _ := intent["model"].(string)
	if model == "" {
		return task.Submission{}, ir.BadRequest("invalid_request", "the request names no model")
	}
	rt := n.entry.Route
	if len(rt.Models) > 0 && !slices.Contains(rt.Models, model) {
		return task.Submission{}, ir.BadRequest("model_not_supported", "model %s is not served by %s %s", model, rt.Method, rt.Path)
	}
	if !n.p.Allows(model) {
		return task.Submission{}, &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "model_not_allowed", Message: fmt.Sprintf("this API key may not use model %s", model)}
	}
	action, _ := intent["action"].(string)
	if action == "" {
		action = rt.Action
	}
	origins, err := n.h.core.OriginTasks(n.r.Context(), n.p, n.plugin().Key, intent["originTaskIds"])
	if err != nil {
		return task.Submission{}, err
	}
	files, _ := body.Value["files"].([]any)
	if files == nil {
		files = []any{}
	}
	retain := rt.RetainResult == nil || *rt.RetainResult
	return task.Submission{Header: n.w.Header(), Generation: n.gen, Plugin: n.plugin(), Principal: n.p, Model: model, Action: action,
		Body: intent["requestBody"], Headers: requestHeaders(n.r.Header), Files: files, Resolver: body.Files,
		Origins: origins, Retain: retain}, nil
}

// queryIntent serves a decoder's {kind:"query", taskId} or {taskIds:[…]}.
func (n *nativeRequest) queryIntent(intent map[string]any) error {
	if ids, ok := intent["taskIds"].([]any); ok {
		views := []any{}
		for _, raw := range ids {
			id, _ := raw.(string)
			t, err := n.h.core.OwnTask(n.r.Context(), n.p, id, n.plugin().Key)
			if err != nil {
				continue
			}
			views = append(views, t.View())
		}
		return n.render(views, nil)
	}
	return n.query(task.IDString(intent["taskId"]))
}

func (n *nativeRequest) query(id string) error {
	t, err := n.h.core.OwnTask(n.r.Context(), n.p, id, n.plugin().Key)
	if err != nil {
		return err
	}
	return n.render(t.View(), nil)
}

// render calls the route's renderer and writes its JSON.
func (n *nativeRequest) render(view any, requestBody any) error {
	rctx := n.renderContext()
	if requestBody != nil {
		rctx["requestBody"] = requestBody
	}
	v, err := call(n.r.Context(), n.plugin(), n.entry.Route.RenderHook(), rctx, view)
	if err != nil {
		return task.HookError(502, "render_failed", err)
	}
	writeJSON(n.w, http.StatusOK, v)
	return nil
}

// renderContext is what renderers see of the request: never credentials,
// never origin tasks.
func (n *nativeRequest) renderContext() map[string]any {
	return map[string]any{"method": n.r.Method, "path": n.r.URL.Path, "params": stringMap(n.params),
		"query": queryValues(n.r.URL.Query())}
}

// fail writes err through native.error when the plugin has it, else in the
// OpenAI dialect. A nil err writes nothing.
func (n *nativeRequest) fail(err error) {
	if err == nil {
		return
	}
	e := ir.As(err)
	if e.Status >= 500 {
		n.h.log.WarnContext(n.r.Context(), "native route failed", "path", n.r.URL.Path, "plugin", n.plugin().Key, "code", e.Code, "err", err)
	}
	if n.plugin().Manifest.Hooks.Has(manifest.NativeErrorHook) {
		arg := map[string]any{"code": e.Code, "message": e.Message, "httpStatus": e.Status, "retryable": e.Retry != ir.RetryNever}
		if v, herr := call(n.r.Context(), n.plugin(), manifest.NativeErrorHook, n.renderContext(), arg); herr == nil {
			writeJSON(n.w, e.Status, v)
			return
		}
	}
	writeOpenAIError(n.w, e)
}

// writeJSON answers a value the gateway or a plugin rendered; one that is
// not JSON becomes an error in the surface's dialect.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if apijson.Write(w, status, v) != nil {
		writeOpenAIError(w, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "render_failed", Message: "the plugin rendered a value that is not JSON"})
	}
}

func writeOpenAIError(w http.ResponseWriter, e *ir.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(openai.Chat.EncodeError(e))
}

// call runs a decoder, renderer or error hook of a plugin.
func call(ctx context.Context, l *plugin.Loaded, hook string, args ...any) (any, error) {
	return l.Pool.Call(ctx, hook, args...)
}
