package taskhttp

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// registerVideo mounts the std_video endpoints.
func (h *Handlers) registerVideo(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/videos", h.createVideo)
	mux.HandleFunc("GET /v1/videos/{id}", h.getVideo)
	mux.HandleFunc("GET /v1/videos/{id}/content", h.videoContent)
	mux.HandleFunc("HEAD /v1/videos/{id}/content", h.videoContent)
}

// createVideo is POST /v1/videos: the model comes from the JSON body or the
// multipart field, and only plugins serve it (there is no relay fallback).
func (h *Handlers) createVideo(w http.ResponseWriter, r *http.Request) {
	pc := &protoCall{h: h, gen: h.core.Generation(), protocol: manifest.ProtocolVideo, operation: opCreate, w: w, r: r}
	// The key comes from the headers and is checked before the body is read,
	// so an anonymous caller cannot make the gateway take a 32 MB upload.
	p, err := h.authenticate(r)
	if err != nil {
		pc.fail(err)
		return
	}
	pc.p = p
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.BodyLimit))
	if err != nil {
		pc.fail(&ir.Error{Status: 413, Kind: ir.KindRequestTooLarge, Code: "body_too_large", Message: "the request body is too large"})
		return
	}
	defer func() { _ = pc.body.Close() }()
	if err := pc.admitVideo(raw); err != nil {
		pc.fail(err)
		return
	}
	var claimers []*plugin.Loaded
	if pc.gen != nil {
		claimers = pc.gen.ProtocolPlugins(manifest.ProtocolVideo, pc.model)
	}
	if len(claimers) == 0 {
		pc.fail(&ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "model_not_found",
			Message: fmt.Sprintf("model %s is not served by any video plugin", pc.model)})
		return
	}
	pc.fail(pc.submitVideo(claimers))
}

// admitVideo decodes the body of an authenticated request and finds the
// model in it.
func (pc *protoCall) admitVideo(raw []byte) error {
	if err := pc.readBody(raw, BodyJSON, BodyMultipart); err != nil {
		return err
	}
	pc.model = bodyField(pc.body.Value, "model")
	if pc.model == "" {
		return ir.BadRequest("invalid_request", "model is required")
	}
	return pc.admit()
}

// bodyField reads a top-level string field of a JSON body, or the first
// value of a form or multipart field.
func bodyField(body map[string]any, name string) string {
	switch body["kind"] {
	case BodyJSON:
		obj, _ := body["value"].(map[string]any)
		s, _ := obj[name].(string)
		return strings.TrimSpace(s)
	case BodyForm, BodyMultipart:
		fields, _ := body["fields"].(map[string]any)
		vals, _ := fields[name].([]any)
		if len(vals) > 0 {
			s, _ := vals[0].(string)
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// serveVideo is the ServeProtocol path of std_video (a caller that already
// read the body and the model).
func (pc *protoCall) serveVideo(claimers []*plugin.Loaded, raw []byte) error {
	if err := pc.admit(); err != nil {
		return err
	}
	if err := pc.readBody(raw, BodyJSON, BodyMultipart); err != nil {
		return err
	}
	return pc.submitVideo(claimers)
}

func (pc *protoCall) submitVideo(claimers []*plugin.Loaded) error {
	out, c, err := pc.submit(claimers, nil)
	if err != nil {
		return err
	}
	view := out.Task.View()
	view["data"] = out.Data
	return pc.renderVideo(c.l, c.claim, out.Task, view, c.intent["requestBody"])
}

// renderVideo renders a task through the plugin's std_video render and
// writes the video object with the host's fields.
func (pc *protoCall) renderVideo(l *plugin.Loaded, claim manifest.ProtocolClaim, t *task.Task, view map[string]any, requestBody any) error {
	ctx := pc.r.Context()
	rctx := pc.renderContext(requestBody)
	pc.h.withArtifacts(ctx, rctx, t)
	v, err := call(ctx, l, claim.HookPath(manifest.HookRender), rctx, view)
	if err != nil {
		return task.HookError(502, "render_failed", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "render_failed", Message: "the plugin's std_video render must return an object"}
	}
	writeJSON(pc.w, http.StatusOK, videoObject(obj, t))
	return nil
}

// videoObject puts the host's standard fields on a rendered video object:
// the public id, the model the client asked for, status, progress and
// times; a legacy task_id is dropped and everything else kept.
func videoObject(obj map[string]any, t *task.Task) map[string]any {
	delete(obj, "task_id")
	obj["id"] = t.PublicID
	obj["object"] = "video"
	obj["model"] = t.Model
	obj["status"] = openAIStatus(t.Status)
	obj["progress"] = progressPercent(t)
	obj["created_at"] = seconds(t.CreatedAt)
	obj["completed_at"] = nil
	if t.Ended() && t.FinishedAt > 0 {
		obj["completed_at"] = seconds(t.FinishedAt)
	}
	if t.Status == task.StatusFailure && obj["error"] == nil {
		obj["error"] = map[string]any{"code": "task_failed", "message": t.FailReason}
	}
	return obj
}

// progressPercent reads the stored progress ("45%", "45", "45.5") as an
// integer 0–100; a finished task is at 100.
func progressPercent(t *task.Task) int {
	if t.Status == task.StatusSuccess {
		return 100
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t.Progress), "%")), 64)
	if err != nil || math.IsNaN(f) {
		return 0
	}
	return int(min(max(f, 0), 100))
}

// videoTask authenticates the caller and finds their std_video task.
func (pc *protoCall) videoTask() (*task.Task, *plugin.Loaded, manifest.ProtocolClaim, error) {
	p, err := pc.h.authenticate(pc.r)
	if err != nil {
		return nil, nil, manifest.ProtocolClaim{}, err
	}
	pc.p = p
	id := pc.r.PathValue("id")
	t, err := pc.h.core.OwnTask(pc.r.Context(), p, id, "")
	if err != nil {
		return nil, nil, manifest.ProtocolClaim{}, err
	}
	l, claim, ok := pc.h.claimFor(pc.r.Context(), t, manifest.ProtocolVideo)
	if !ok {
		return nil, nil, claim, task.TaskNotFound(id)
	}
	pc.model = t.Model
	return t, l, claim, nil
}

// getVideo is GET /v1/videos/{id}.
func (h *Handlers) getVideo(w http.ResponseWriter, r *http.Request) {
	pc := &protoCall{h: h, protocol: manifest.ProtocolVideo, operation: opRetrieve, w: w, r: r}
	t, l, claim, err := pc.videoTask()
	if err != nil {
		pc.fail(err)
		return
	}
	pc.fail(pc.renderVideo(l, claim, t, t.View(), nil))
}

// videoContent is GET and HEAD /v1/videos/{id}/content: the first video
// artifact of a finished task.
func (h *Handlers) videoContent(w http.ResponseWriter, r *http.Request) {
	pc := &protoCall{h: h, protocol: manifest.ProtocolVideo, operation: opRetrieve, w: w, r: r}
	t, _, _, err := pc.videoTask()
	if err != nil {
		pc.fail(err)
		return
	}
	if t.Status != task.StatusSuccess {
		pc.fail(&ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "video_not_ready", Message: fmt.Sprintf("video %s has no content yet (status %s)", t.PublicID, openAIStatus(t.Status))})
		return
	}
	links, err := h.core.ArtifactLinks(r.Context(), t)
	if err != nil {
		pc.fail(err)
		return
	}
	for _, a := range links {
		if a.Type == "video" {
			h.serveArtifact(w, r, t, a.Key)
			return
		}
	}
	pc.fail(&ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "artifact_not_found", Message: fmt.Sprintf("video %s has no video content", t.PublicID)})
}
