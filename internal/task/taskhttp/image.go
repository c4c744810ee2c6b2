package taskhttp

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// serveImage is POST /v1/images/generations (JSON) and /v1/images/edits
// (JSON or multipart) for a claimed model. An immediate result answers at
// once; a task is waited for inside the request.
func (pc *protoCall) serveImage(claimers []*plugin.Loaded, raw []byte) error {
	if err := pc.admit(); err != nil {
		return err
	}
	kinds := []string{BodyJSON}
	if pc.operation == opEdit {
		kinds = append(kinds, BodyMultipart)
	}
	if err := pc.readBody(raw, kinds...); err != nil {
		return err
	}
	out, c, err := pc.submit(claimers, map[string]any{"images": imageCount(pc.body.Value)})
	if err != nil {
		return err
	}
	t, data := out.Task, out.Data
	if !t.Ended() {
		t, err = pc.h.core.Await(pc.r.Context(), t, time.Now().Add(pc.h.opts.ProtocolTimeout), nil)
		switch {
		case errors.Is(err, task.ErrWaitTimeout):
			return &ir.Error{Status: http.StatusGatewayTimeout, Kind: ir.KindTimeout, Code: "task_timeout",
				Message: fmt.Sprintf("the image task %s did not finish in time; it goes on in the background", t.PublicID)}
		case err != nil:
			return nil // the client went away; the poller finishes the task
		}
		data = nil
	}
	if t.Status == task.StatusFailure {
		reason := t.FailReason
		if reason == "" {
			reason = "the image task failed"
		}
		return &ir.Error{Status: http.StatusBadRequest, Kind: ir.KindInvalidRequest, Code: "task_failed", Message: reason}
	}
	return pc.renderImage(c, t, data)
}

// imageCount is the number of images the request bills for: its n, 1 when
// absent or unreadable.
func imageCount(body map[string]any) int64 {
	var n int64
	switch body["kind"] {
	case BodyJSON:
		obj, _ := body["value"].(map[string]any)
		f, _ := manifest.Number(obj["n"])
		n = int64(f)
	default:
		n, _ = strconv.ParseInt(bodyField(body, "n"), 10, 64)
	}
	return max(n, 1)
}

// renderImage renders a successful task through protocols.std_image.render
// (without ctx.artifacts: image addresses come from the upstream result),
// adds created, and inlines images when the client asked for b64_json.
func (pc *protoCall) renderImage(c *candidate, t *task.Task, data any) error {
	ctx := pc.r.Context()
	v, err := call(ctx, c.l, c.claim.HookPath(manifest.HookRender), pc.renderContext(c.intent["requestBody"]), renderView(t, data))
	if err != nil {
		return task.HookError(502, "render_failed", err)
	}
	obj, items, msg := checkImageResult(v)
	if msg != "" {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "render_failed", Message: "the plugin's std_image render " + msg}
	}
	if _, ok := obj["created"]; !ok {
		obj["created"] = seconds(t.CreatedAt)
	}
	if bodyField(pc.body.Value, "response_format") == "b64_json" {
		pc.h.inlineImages(ctx, t, items)
	}
	writeJSON(pc.w, http.StatusOK, obj)
	return nil
}

// checkImageResult checks a render result: an object whose data is an
// array of objects each with a url or a b64_json string.
func checkImageResult(v any) (map[string]any, []map[string]any, string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, "must return an object {data: [...]}"
	}
	list, ok := obj["data"].([]any)
	if !ok {
		return nil, nil, "must return data as an array"
	}
	items := make([]map[string]any, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		u, _ := m["url"].(string)
		b, _ := m["b64_json"].(string)
		if !ok || (u == "" && b == "") {
			return nil, nil, fmt.Sprintf("returned data[%d] without a url or b64_json", i)
		}
		items[i] = m
	}
	return obj, items, ""
}
