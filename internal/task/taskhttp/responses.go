package taskhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// responsesMode chooses the std_responses mode as the OpenAI API does
// (CONTRACT §8): background: true, then stream: true, else sync.
func responsesMode(body map[string]any) string {
	obj, _ := body["value"].(map[string]any)
	switch {
	case obj["background"] == true:
		return manifest.ModeBackground
	case obj["stream"] == true:
		return manifest.ModeStream
	}
	return manifest.ModeSync
}

// serveResponses is POST /v1/responses for a claimed model. The mode is
// checked against the claims before any hook runs or quota is reserved.
func (pc *protoCall) serveResponses(claimers []*plugin.Loaded, raw []byte) error {
	if err := pc.admit(); err != nil {
		return err
	}
	if err := pc.readBody(raw, BodyJSON); err != nil {
		return err
	}
	pc.mode = responsesMode(pc.body.Value)
	out, c, err := pc.submit(claimers, nil)
	if err != nil {
		return err
	}
	rb := c.intent["requestBody"]
	switch pc.mode {
	case manifest.ModeStream:
		return pc.streamResponse(out, c, rb)
	case manifest.ModeBackground:
		if out.Task.Ended() {
			return pc.writeFinal(c.l, c.claim, out.Task, out.Data, rb)
		}
		writeJSON(pc.w, http.StatusOK, pc.pendingResponse(c.l, c.claim, out.Task, out.Data, rb))
		return nil
	}
	return pc.syncResponse(out, c, rb)
}

// syncResponse blocks until the task ends, then renders it with renderFinal.
func (pc *protoCall) syncResponse(out *task.Submitted, c *candidate, rb any) error {
	t, data := out.Task, out.Data
	if !t.Ended() {
		var err error
		t, err = pc.h.core.Await(pc.r.Context(), t, time.Now().Add(pc.h.opts.ProtocolTimeout), nil)
		switch {
		case errors.Is(err, task.ErrWaitTimeout):
			return responseTimeout(t)
		case err != nil:
			return nil // the client went away; the poller finishes the task
		}
		data = nil
	}
	return pc.writeFinal(c.l, c.claim, t, data, rb)
}

func responseTimeout(t *task.Task) *ir.Error {
	return &ir.Error{Status: http.StatusGatewayTimeout, Kind: ir.KindTimeout, Code: "task_timeout",
		Message: fmt.Sprintf("response %s is still in progress; retrieve it later with GET /v1/responses/%s", t.PublicID, t.PublicID)}
}

func (pc *protoCall) writeFinal(l *plugin.Loaded, claim manifest.ProtocolClaim, t *task.Task, data, rb any) error {
	obj, err := pc.finalResponse(l, claim, t, data, rb)
	if err != nil {
		return err
	}
	writeJSON(pc.w, http.StatusOK, obj)
	return nil
}

// renderView is the task view a renderer gets, with the in-memory data of a
// fresh submit when there is one.
func renderView(t *task.Task, data any) map[string]any {
	v := t.View()
	if data != nil {
		v["data"] = data
	}
	return v
}

// finalResponse renders a finished task: renderFinal, or for a stream-only
// claim one renderEvents call with no previous state, whose events hold
// the response.
func (pc *protoCall) finalResponse(l *plugin.Loaded, claim manifest.ProtocolClaim, t *task.Task, data, rb any) (map[string]any, error) {
	ctx := pc.r.Context()
	rctx := pc.renderContext(rb)
	pc.h.withArtifacts(ctx, rctx, t)
	if !l.Manifest.Hooks.Has(claim.HookPath(manifest.HookRenderFinal)) {
		res, err := pc.renderEvents(ctx, l, claim, rctx, renderView(t, data), nil)
		if err != nil {
			return nil, err
		}
		return responseObject(responseFromEvents(res.events), t), nil
	}
	v, err := call(ctx, l, claim.HookPath(manifest.HookRenderFinal), rctx, renderView(t, data))
	if err != nil {
		return nil, task.HookError(502, "render_failed", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "render_failed", Message: "renderFinal must return an object"}
	}
	return responseObject(obj, t), nil
}

// pendingResponse is the answer for a task still running: renderFinal's
// when the plugin has it and it renders a running task, else the minimal
// Responses object. No hook is required.
func (pc *protoCall) pendingResponse(l *plugin.Loaded, claim manifest.ProtocolClaim, t *task.Task, data, rb any) map[string]any {
	hook := claim.HookPath(manifest.HookRenderFinal)
	if l.Manifest.Hooks.Has(hook) {
		v, err := call(pc.r.Context(), l, hook, pc.renderContext(rb), renderView(t, data))
		if obj, ok := v.(map[string]any); ok && err == nil {
			return responseObject(obj, t)
		}
	}
	return responseObject(map[string]any{}, t)
}

// responseObject puts the host's fields on a Responses object: the public
// id, the client's model, the status and creation time; a failed task
// carries its reason.
func responseObject(obj map[string]any, t *task.Task) map[string]any {
	obj["id"] = t.PublicID
	obj["object"] = "response"
	obj["model"] = t.Model
	obj["status"] = openAIStatus(t.Status)
	obj["created_at"] = seconds(t.CreatedAt)
	if _, ok := obj["output"]; !ok {
		obj["output"] = []any{}
	}
	if t.Status == task.StatusFailure && obj["error"] == nil {
		obj["error"] = map[string]any{"code": "task_failed", "message": t.FailReason}
	}
	return obj
}

// responseFromEvents takes the response a stream-only plugin's events
// describe: the last event's `response` object when one carries it, else
// the text of its output events as one assistant message.
func responseFromEvents(events []map[string]any) map[string]any {
	var last map[string]any
	var text strings.Builder
	var failure map[string]any
	for _, ev := range events {
		if r, ok := ev["response"].(map[string]any); ok {
			last = r
		}
		switch ev["type"] {
		case "output":
			s, _ := ev["data"].(string)
			text.WriteString(s)
		case "response.output_text.delta":
			s, _ := ev["delta"].(string)
			text.WriteString(s)
		case "error":
			failure = map[string]any{"code": ev["code"], "message": ev["message"]}
		}
	}
	if last != nil {
		return last
	}
	obj := map[string]any{"output": []any{}}
	if text.Len() > 0 {
		obj["output"] = []any{map[string]any{"type": "message", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text.String(), "annotations": []any{}}}}}
	}
	if failure != nil {
		obj["error"] = failure
	}
	return obj
}

// ServeResponse serves GET /v1/responses/{id} for a task of this gateway:
// the key's own std_responses task, rendered at terminal status, pending
// before. It reports false, having written nothing, when no task has that
// public id.
func (h *Handlers) ServeResponse(w http.ResponseWriter, r *http.Request, id string) bool {
	t, err := h.core.Store().GetPublic(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t == nil) {
		return false
	}
	pc := &protoCall{h: h, protocol: manifest.ProtocolResponses, operation: opRetrieve, w: w, r: r}
	if err != nil {
		h.log.Error("reading a task for GET /v1/responses failed", "err", err)
		pc.fail(&ir.Error{Status: 500, Kind: ir.KindInternal, Code: "internal_error", Message: "the response could not be read"})
		return true
	}
	pc.fail(pc.retrieveResponse(t))
	return true
}

func (pc *protoCall) retrieveResponse(t *task.Task) error {
	p, err := pc.h.authenticate(pc.r)
	if err != nil {
		return err
	}
	pc.p, pc.model = p, t.Model
	l, claim, ok := pc.h.claimFor(pc.r.Context(), t, manifest.ProtocolResponses)
	if t.UserID != p.UserID || !ok || t.Discarded() {
		return responseNotFound(t.PublicID)
	}
	if !t.Ended() {
		writeJSON(pc.w, http.StatusOK, pc.pendingResponse(l, claim, t, nil, nil))
		return nil
	}
	obj, err := pc.finalResponse(l, claim, t, nil, nil)
	if err != nil {
		// Retrieval always answers: a render failure leaves the host's
		// own fields, and the log says why.
		pc.h.log.Warn("rendering a retrieved response failed", "task", t.PublicID, "err", err)
		obj = responseObject(map[string]any{}, t)
	}
	writeJSON(pc.w, http.StatusOK, obj)
	return nil
}

// eventsResult is what renderEvents returned.
type eventsResult struct {
	events []map[string]any
	state  any
	done   bool
}

func (pc *protoCall) renderEvents(ctx context.Context, l *plugin.Loaded, claim manifest.ProtocolClaim, rctx, view map[string]any, prev any) (*eventsResult, error) {
	v, err := call(ctx, l, claim.HookPath(manifest.HookRenderEvents), rctx, view, prev)
	if err != nil {
		return nil, task.HookError(502, "render_failed", err)
	}
	res, perr := parseEventsResult(v)
	if perr != "" {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "render_failed", Message: perr}
	}
	return res, nil
}

func parseEventsResult(v any) (*eventsResult, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "renderEvents must return {events, state, done}"
	}
	res := &eventsResult{state: m["state"]}
	res.done, _ = m["done"].(bool)
	raw, ok := m["events"].([]any)
	if !ok && m["events"] != nil {
		return nil, "renderEvents: events must be an array of objects"
	}
	for i, e := range raw {
		ev, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("renderEvents: events[%d] must be an object", i)
		}
		res.events = append(res.events, ev)
	}
	return res, ""
}

// responseNotFound is word for word the relay's answer for a response id
// it does not know, so that another user's task id cannot be told apart
// from an id that does not exist.
func responseNotFound(id string) *ir.Error {
	return &ir.Error{Status: 404, Kind: ir.KindInvalidRequest, Code: "not_found", Param: "response_id",
		Message: "Response with id '" + id + "' not found."}
}
