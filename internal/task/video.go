package task

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
)

// registerVideo mounts the std_video endpoints.
func (s *Service) registerVideo(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/videos", s.createVideo)
	mux.HandleFunc("GET /v1/videos/{id}", s.getVideo)
	mux.HandleFunc("GET /v1/videos/{id}/content", s.videoContent)
	mux.HandleFunc("HEAD /v1/videos/{id}/content", s.videoContent)
}

// createVideo is POST /v1/videos: the model comes from the JSON body or the
// multipart field, and only plugins serve it (there is no relay fallback).
func (s *Service) createVideo(w http.ResponseWriter, r *http.Request) {
	pc := &protoCall{s: s, gen: s.d.Generations.Current(), protocol: manifest.ProtocolVideo, operation: opCreate, w: w, r: r}
	// The key comes from the headers and is checked before the body is read,
	// so an anonymous caller cannot make the gateway take a 32 MB upload.
	p, err := s.authenticate(r)
	if err != nil {
		pc.fail(err)
		return
	}
	pc.p = p
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.BodyLimit))
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
	view := taskView(out.task)
	view["data"] = out.data
	return pc.renderVideo(c.l, c.claim, out.task, view, c.intent["requestBody"])
}

// renderVideo renders a task through the plugin's std_video render and
// writes the video object with the host's fields.
func (pc *protoCall) renderVideo(l *plugin.Loaded, claim manifest.ProtocolClaim, t *Task, view map[string]any, requestBody any) error {
	ctx := pc.r.Context()
	rctx := pc.renderContext(requestBody)
	pc.s.withArtifacts(ctx, rctx, t)
	v, err := call(ctx, l, claim.HookPath(manifest.HookRender), rctx, view)
	if err != nil {
		return hookError(502, "render_failed", err, nil)
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
func videoObject(obj map[string]any, t *Task) map[string]any {
	delete(obj, "task_id")
	obj["id"] = t.PublicID
	obj["object"] = "video"
	obj["model"] = t.Model
	obj["status"] = openAIStatus(t.Status)
	obj["progress"] = progressPercent(t)
	obj["created_at"] = seconds(t.CreatedAt)
	obj["completed_at"] = nil
	if terminal(t.Status) && t.FinishedAt > 0 {
		obj["completed_at"] = seconds(t.FinishedAt)
	}
	if t.Status == StatusFailure && obj["error"] == nil {
		obj["error"] = map[string]any{"code": "task_failed", "message": t.FailReason}
	}
	return obj
}

// progressPercent reads the stored progress ("45%", "45", "45.5") as an
// integer 0–100; a finished task is at 100.
func progressPercent(t *Task) int {
	if t.Status == StatusSuccess {
		return 100
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t.Progress), "%")), 64)
	if err != nil || math.IsNaN(f) {
		return 0
	}
	return int(min(max(f, 0), 100))
}

// videoTask authenticates the caller and finds their std_video task.
func (pc *protoCall) videoTask() (*Task, *plugin.Loaded, manifest.ProtocolClaim, error) {
	p, err := pc.s.authenticate(pc.r)
	if err != nil {
		return nil, nil, manifest.ProtocolClaim{}, err
	}
	pc.p = p
	id := pc.r.PathValue("id")
	t, err := pc.s.ownTask(pc.r.Context(), p, id, "")
	if err != nil {
		return nil, nil, manifest.ProtocolClaim{}, err
	}
	l, claim, ok := pc.s.claimFor(pc.r.Context(), t, manifest.ProtocolVideo)
	if !ok {
		return nil, nil, claim, taskNotFound(id)
	}
	pc.model = t.Model
	return t, l, claim, nil
}

// getVideo is GET /v1/videos/{id}.
func (s *Service) getVideo(w http.ResponseWriter, r *http.Request) {
	pc := &protoCall{s: s, protocol: manifest.ProtocolVideo, operation: opRetrieve, w: w, r: r}
	t, l, claim, err := pc.videoTask()
	if err != nil {
		pc.fail(err)
		return
	}
	pc.fail(pc.renderVideo(l, claim, t, taskView(t), nil))
}

// videoContent is GET and HEAD /v1/videos/{id}/content: the first video
// artifact of a finished task.
func (s *Service) videoContent(w http.ResponseWriter, r *http.Request) {
	pc := &protoCall{s: s, protocol: manifest.ProtocolVideo, operation: opRetrieve, w: w, r: r}
	t, _, _, err := pc.videoTask()
	if err != nil {
		pc.fail(err)
		return
	}
	if t.Status != StatusSuccess {
		pc.fail(&ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "video_not_ready", Message: fmt.Sprintf("video %s has no content yet (status %s)", t.PublicID, openAIStatus(t.Status))})
		return
	}
	links, err := s.artifactLinks(r.Context(), t)
	if err != nil {
		pc.fail(err)
		return
	}
	for _, a := range links {
		if a.Type == "video" {
			s.serveArtifact(w, r, t, a.Key)
			return
		}
	}
	pc.fail(&ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "artifact_not_found", Message: fmt.Sprintf("video %s has no video content", t.PublicID)})
}
