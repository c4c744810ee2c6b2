package taskhttp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

func newResponsesEnv(t *testing.T, script ...string) (*protoEnv, *jobVendor) {
	pe := newProtoEnv(t, "responses.js", "responses_stream.js")
	pe.perCall("resp-1", "resp-s")
	v := newJobVendor(t, script...)
	pe.channel("all", "respall", v.srv.URL, []string{"resp-1"}, nil)
	pe.channel("stream", "respstream", v.srv.URL, []string{"resp-s"}, nil)
	return pe, v
}

// sseEvent is one event of a test stream.
type sseEvent struct {
	name string
	data map[string]any
}

func parseSSE(t *testing.T, raw []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
					t.Fatalf("event data is not JSON: %q", line)
				}
			}
		}
		if ev.data != nil {
			out = append(out, ev)
		}
	}
	return out
}

func TestResponsesStreamFramesRenderedEventsUntilDone(t *testing.T) {
	pe, v := newResponsesEnv(t, `{"status":"queued"}`, `{"status":"running"}`, `{"status":"running"}`, `{"status":"done"}`)
	a := pe.post("/v1/responses", userKey, `{"model":"resp-1","input":"a cat","stream":true}`)
	if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %v %s", a.status, a.header, a.raw)
	}
	evs := parseSSE(t, a.raw)
	var names []string
	for _, ev := range evs {
		names = append(names, ev.name)
		if ev.data["type"] != ev.name {
			t.Errorf("event %q carries type %v: the SSE name must be the event's type", ev.name, ev.data["type"])
		}
	}
	want := "response.progress response.progress response.progress response.progress response.completed"
	if strings.Join(names, " ") != want {
		t.Errorf("events = %v, want %s (one per status change)", names, want)
	}
	last := evs[len(evs)-1].data["response"].(map[string]any)
	text := last["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, "/artifacts/main") {
		t.Errorf("completed text = %q, want the artifact address injected for the success render", text)
	}
	if sub := v.received()[0]; sub["stream"] != true {
		t.Errorf("decoder saw stream = %v, want true", sub["stream"])
	}
}

func TestResponsesSyncBlocksUntilTerminalAndRendersFinal(t *testing.T) {
	pe, _ := newResponsesEnv(t, `{"status":"running"}`, `{"status":"done"}`)
	a := pe.post("/v1/responses", userKey, `{"model":"resp-1","input":"a cat"}`)
	if a.status != 200 {
		t.Fatalf("sync: %d %s", a.status, a.raw)
	}
	id, _ := a.json["id"].(string)
	meta, _ := a.json["metadata"].(map[string]any)
	if !strings.HasPrefix(id, "task_") || a.json["object"] != "response" || a.json["status"] != "completed" ||
		a.json["model"] != "resp-1" || meta["vendor"] != "respall" {
		t.Errorf("sync answer = %s", a.raw)
	}
	tk := pe.task(id)
	if tk.Status != task.StatusSuccess || tk.BillingStatus != task.BillingSettled {
		t.Errorf("task = %s/%s, want SUCCESS and settled", tk.Status, tk.BillingStatus)
	}
}

func TestResponsesSyncTimesOutWithTaskTimeout(t *testing.T) {
	pe, _ := newResponsesEnv(t, `{"status":"running"}`)
	pe.withHTTPOptions(func(o *Options) { o.ProtocolTimeout = 40 * time.Millisecond })
	a := pe.post("/v1/responses", userKey, `{"model":"resp-1","input":"slow"}`)
	e, _ := a.json["error"].(map[string]any)
	if a.status != http.StatusGatewayTimeout || e["code"] != "task_timeout" || !strings.Contains(e["message"].(string), "GET /v1/responses/") {
		t.Errorf("sync past the protocol timeout: %d %s", a.status, a.raw)
	}
}

func TestResponsesBackgroundAnswersAtOnceAndRetrievalRendersLater(t *testing.T) {
	pe, _ := newResponsesEnv(t, `{"status":"running"}`, `{"status":"done"}`)
	a := pe.post("/v1/responses", userKey, `{"model":"resp-1","input":"a cat","background":true,"stream":true}`)
	id, _ := a.json["id"].(string)
	if a.status != 200 || a.json["status"] != "queued" || a.json["object"] != "response" || len(a.json["output"].([]any)) != 0 {
		t.Fatalf("background: %d %s, want a queued response at once", a.status, a.raw)
	}
	if pe.task(id).Status != task.StatusSubmitted {
		t.Fatalf("the background answer waited for the task")
	}
	if g := pe.get("/v1/responses/"+id, userKey); g.status != 200 || g.json["status"] != "queued" {
		t.Errorf("GET while queued: %d %s", g.status, g.raw)
	}
	pe.tick(1)
	if g := pe.get("/v1/responses/"+id, userKey); g.json["status"] != "in_progress" {
		t.Errorf("GET while running: %s", g.raw)
	}
	pe.tick(1)
	g := pe.get("/v1/responses/"+id, userKey)
	out, _ := g.json["output"].([]any)
	if g.status != 200 || g.json["status"] != "completed" || len(out) != 1 || !strings.Contains(string(g.raw), "final video at ") {
		t.Errorf("GET after success: %d %s", g.status, g.raw)
	}
	// Word for word what the relay answers for an id it does not know, so
	// another user's task id cannot be probed.
	want := `{"error":{"message":"Response with id '` + id + `' not found.","type":"invalid_request_error","param":"response_id","code":"not_found"}}`
	if o := pe.get("/v1/responses/"+id, otherKey); o.status != http.StatusNotFound || strings.TrimSpace(string(o.raw)) != want {
		t.Errorf("GET by another user: %d %s, want 404 %s", o.status, o.raw, want)
	}
}

func TestResponsesFailureRendersAFailedResponse(t *testing.T) {
	pe, _ := newResponsesEnv(t, `{"status":"failed","error":"quota at vendor"}`)
	a := pe.post("/v1/responses", userKey, `{"model":"resp-1","input":"x"}`)
	e, _ := a.json["error"].(map[string]any)
	if a.status != 200 || a.json["status"] != "failed" || e["message"] != "quota at vendor" {
		t.Errorf("failed sync response: %d %s", a.status, a.raw)
	}
	if got := pe.quota(pe.alice); got != 1_000_000 {
		t.Errorf("quota = %d, want the reservation refunded", got)
	}
	if rs := pe.logs(pe.alice, store.LogRefund); len(rs) != 1 {
		t.Errorf("refund rows = %d, want 1", len(rs))
	}
}

func TestStreamOnlyPluginRetrievalRendersOneEventsCallWithoutState(t *testing.T) {
	pe, _ := newResponsesEnv(t, `{"status":"running"}`, `{"status":"done"}`)
	a := pe.post("/v1/responses", userKey, `{"model":"resp-s","input":"x","stream":true}`)
	evs := parseSSE(t, a.raw)
	if len(evs) < 3 || evs[len(evs)-1].name != "output" || evs[len(evs)-1].data["data"] != "ready" {
		t.Fatalf("stream-only events = %+v", evs)
	}
	id := pe.lastTask(t)
	g := pe.get("/v1/responses/"+id, userKey)
	if g.status != 200 || g.json["status"] != "completed" || !strings.Contains(string(g.raw), `"text":"clip ready"`) {
		t.Errorf("stream-only retrieval: %d %s, want the single no-state render's text", g.status, g.raw)
	}
}

// lastTask is the public id of the newest task.
func (pe *protoEnv) lastTask(t *testing.T) string {
	ts, _, err := pe.svc.Store().List(t.Context(), task.Filter{}, store.Page{Page: 1, PageSize: 1})
	if err != nil || len(ts) == 0 {
		t.Fatalf("no task: %v", err)
	}
	return ts[0].PublicID
}

func TestResponsesRetrievalOnlyServesStdResponsesTasks(t *testing.T) {
	pe := newProtoEnv(t, "responses.js", "video.js")
	pe.perCall("vid-1")
	v := newJobVendor(t, `{"status":"running"}`)
	pe.channel("vid", "vidco", v.srv.URL, []string{"vid-1"}, nil)
	id := pe.post("/v1/videos", userKey, `{"model":"vid-1","prompt":"x"}`).json["id"].(string)
	if g := pe.get("/v1/responses/"+id, userKey); g.status != http.StatusNotFound {
		t.Errorf("GET /v1/responses of a video task: %d %s, want 404", g.status, g.raw)
	}
}
