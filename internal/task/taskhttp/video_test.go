package taskhttp

import (
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func newVideoEnv(t *testing.T, script ...string) (*protoEnv, *jobVendor) {
	pe := newProtoEnv(t, "video.js")
	pe.perCall("vid-1")
	v := newJobVendor(t, script...)
	pe.channel("vid", "vidco", v.srv.URL, []string{"vid-1"}, func(c *store.Channel) {
		c.ModelMapping = map[string]string{"vid-1": "vid-1-upstream"}
	})
	return pe, v
}

func TestVideoCreateRendersTheHostFieldsOverThePluginsObject(t *testing.T) {
	pe, v := newVideoEnv(t, `{"status":"running","progress":"42%"}`, `{"status":"done"}`)
	a := pe.post("/v1/videos", userKey, `{"model":"vid-1","prompt":"a cat"}`)
	if a.status != http.StatusOK {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	id, _ := a.json["id"].(string)
	want := map[string]any{"object": "video", "model": "vid-1", "status": "queued", "progress": float64(0),
		"completed_at": nil, "seconds": "8", "prompt": "a cat"}
	for k, w := range want {
		if a.json[k] != w {
			t.Errorf("%s = %v, want %v", k, a.json[k], w)
		}
	}
	if !strings.HasPrefix(id, "task_") || a.json["created_at"].(float64) <= 0 {
		t.Errorf("id = %q, created_at = %v: want the public task id and a creation time", id, a.json["created_at"])
	}
	if _, ok := a.json["task_id"]; ok {
		t.Errorf("the legacy task_id is still there: %s", a.raw)
	}
	sub := v.received()[0]
	if sub["model"] != "vid-1-upstream" || sub["decodedFor"] != "vid-1-upstream" || sub["op"] != "create" {
		t.Errorf("vendor received %v: want the mapped model, the second decode's upstreamModel and the create action", sub)
	}

	pe.tick(1)
	a = pe.get("/v1/videos/"+id, userKey)
	if a.status != 200 || a.json["status"] != "in_progress" || a.json["progress"] != float64(42) || a.json["prompt"] != nil {
		t.Errorf("after one poll: %d %s", a.status, a.raw)
	}
	pe.tick(1)
	a = pe.get("/v1/videos/"+id, userKey)
	if a.json["status"] != "completed" || a.json["progress"] != float64(100) || a.json["completed_at"] == nil {
		t.Errorf("after success: %s", a.raw)
	}
	if d, _ := a.json["download"].(string); !strings.Contains(d, "/v1/tasks/"+id+"/artifacts/main") {
		t.Errorf("download = %q, want the signed artifact address injected as ctx.artifacts.main.url", d)
	}
}

func TestVideoFailureCarriesTheReason(t *testing.T) {
	pe, _ := newVideoEnv(t, `{"status":"failed","error":"nsfw prompt"}`)
	id := pe.post("/v1/videos", userKey, `{"model":"vid-1","prompt":"x"}`).json["id"].(string)
	pe.tick(1)
	a := pe.get("/v1/videos/"+id, userKey)
	e, _ := a.json["error"].(map[string]any)
	if a.json["status"] != "failed" || e["message"] != "nsfw prompt" || e["code"] != "task_failed" {
		t.Errorf("failed video = %s", a.raw)
	}
	if got := pe.quota(pe.alice); got != 1_000_000 {
		t.Errorf("quota = %d, want the reservation refunded", got)
	}
}

func TestVideoCreateTakesMultipartWithTheModelField(t *testing.T) {
	pe, v := newVideoEnv(t, `{"status":"running"}`)
	ct, body := protoMultipart(t, map[string]string{"model": "vid-1", "prompt": "from a still"}, "input_reference", "still.png", "PNG")
	a := pe.call(http.MethodPost, "/v1/videos", userKey, ct, body)
	if a.status != http.StatusOK {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	files, _ := v.received()[0]["files"].([]any)
	if len(files) != 1 || files[0] != "request_file:input_reference" {
		t.Errorf("vendor saw files %v, want the upload's ref", files)
	}
}

func TestVideoRequestsAreCheckedBeforeAnyHook(t *testing.T) {
	pe, v := newVideoEnv(t, `{"status":"running"}`)
	tests := []struct {
		name, ct, body, key string
		status              int
	}{
		{"no key", "application/json", `{"model":"vid-1","prompt":"x"}`, "", 401},
		{"no model", "application/json", `{"prompt":"x"}`, userKey, 400},
		{"model no plugin serves", "application/json", `{"model":"nope","prompt":"x"}`, userKey, 404},
		{"form body", "application/x-www-form-urlencoded", `model=vid-1&prompt=x`, userKey, 400},
		{"decoder refuses", "application/json", `{"model":"vid-1"}`, userKey, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if a := pe.call(http.MethodPost, "/v1/videos", tc.key, tc.ct, []byte(tc.body)); a.status != tc.status {
				t.Errorf("status = %d %s, want %d", a.status, a.raw, tc.status)
			}
		})
	}
	if len(v.received()) != 0 {
		t.Errorf("vendor received %v, want nothing", v.received())
	}
}

func TestVideoContentServesTheFirstVideoArtifactOnlyAfterSuccess(t *testing.T) {
	pe, v := newVideoEnv(t, `{"status":"running"}`)
	id := pe.post("/v1/videos", userKey, `{"model":"vid-1","prompt":"x"}`).json["id"].(string)
	pe.tick(1)
	if a := pe.get("/v1/videos/"+id+"/content", userKey); a.status != http.StatusNotFound {
		t.Errorf("content before success: %d %s, want 404", a.status, a.raw)
	}
	v.setScript(`{"status":"done"}`)
	pe.tick(1)
	a := pe.get("/v1/videos/"+id+"/content", userKey)
	if a.status != http.StatusOK || string(a.raw) != "CONTENT-main" {
		t.Errorf("content: %d %q, want the main video (not the poster image)", a.status, a.raw)
	}
	h := pe.call(http.MethodHead, "/v1/videos/"+id+"/content", userKey, "", nil)
	if h.status != http.StatusOK || len(h.raw) != 0 || h.header.Get("Content-Type") != "video/mp4" {
		t.Errorf("HEAD content: %d %q %v", h.status, h.raw, h.header)
	}
}

func TestVideoRetrievalIsOwnTasksOnly(t *testing.T) {
	pe, _ := newVideoEnv(t, `{"status":"running"}`)
	id := pe.post("/v1/videos", userKey, `{"model":"vid-1","prompt":"x"}`).json["id"].(string)
	for _, path := range []string{"/v1/videos/" + id, "/v1/videos/" + id + "/content", "/v1/videos/task_unknown"} {
		if a := pe.get(path, otherKey); a.status != http.StatusNotFound {
			t.Errorf("GET %s by another user: %d %s, want 404", path, a.status, a.raw)
		}
	}
}
