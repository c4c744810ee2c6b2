package taskhttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

func newImageEnv(t *testing.T, script ...string) (*protoEnv, *jobVendor) {
	pe := newProtoEnv(t, "image_sync.js", "image_async.js")
	pe.perCall("img-sync", "img-async")
	v := newJobVendor(t, script...)
	pe.channel("sync", "imgsync", v.srv.URL, []string{"img-sync"}, nil)
	pe.channel("async", "imgasync", v.srv.URL, []string{"img-async"}, nil)
	return pe, v
}

func TestImageImmediateResultAnswersAtOnceAndIsNotRetained(t *testing.T) {
	pe, v := newImageEnv(t)
	v.submitBody = `{"id":"img-1","urls":["` + v.srv.URL + `/img/ok.png"]}`
	a := pe.post("/v1/images/generations", userKey, `{"model":"img-sync","prompt":"a cat","n":2}`)
	data, _ := a.json["data"].([]any)
	if a.status != 200 || len(data) != 1 || a.json["revised_prompt"] != "revised a cat" || a.json["created"].(float64) <= 0 {
		t.Fatalf("generation: %d %s", a.status, a.raw)
	}
	if item := data[0].(map[string]any); item["url"] != v.srv.URL+"/img/ok.png" || item["b64_json"] != nil {
		t.Errorf("item = %v, want the url only", item)
	}
	if sub := v.received()[0]; sub["op"] != "generate" {
		t.Errorf("operation = %v, want generate", sub["op"])
	}
	id := pe.lastTask(t)
	tk := pe.task(id)
	if tk.Status != task.StatusSuccess || tk.Data != nil || tk.BillingStatus != task.BillingSettled {
		t.Errorf("task = %s data=%s billing=%s, want SUCCESS, discarded, settled", tk.Status, tk.Data, tk.BillingStatus)
	}
	if g := pe.get("/v1/tasks/"+id, userKey); g.status != http.StatusNotFound {
		t.Errorf("GET /v1/tasks of an unretained image: %d, want 404", g.status)
	}
	consumes := pe.logs(pe.alice, store.LogConsume)
	var other map[string]any
	if len(consumes) != 1 || json.Unmarshal(consumes[0].Other, &other) != nil || other["images"] != float64(2) {
		t.Errorf("consume rows = %+v, want one with other.images = 2", consumes)
	}
	if got := pe.quota(pe.alice); got != 1_000_000-1_000 {
		t.Errorf("quota = %d, want one call charged", got)
	}
}

func TestImageB64JSONDownloadsEachURLAndKeepsItOnFailure(t *testing.T) {
	tests := []struct {
		name         string
		allowPrivate bool
		wantOK       bool
	}{
		{"download allowed: the ok image is inlined, the missing one keeps its url", true, true},
		{"private addresses refused: every url kept without b64_json", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pe, v := newImageEnv(t)
			pe.withOptions(func(o *task.Options) { o.AllowPrivateContent = tc.allowPrivate })
			ok, missing := v.srv.URL+"/img/ok.png", v.srv.URL+"/img/missing.png"
			v.submitBody = `{"id":"img-1","urls":["` + ok + `","` + missing + `"]}`
			a := pe.post("/v1/images/generations", userKey, `{"model":"img-sync","prompt":"x","response_format":"b64_json"}`)
			if a.status != 200 {
				t.Fatalf("generation: %d %s", a.status, a.raw)
			}
			data := a.json["data"].([]any)
			first, second := data[0].(map[string]any), data[1].(map[string]any)
			want := any(nil)
			if tc.wantOK {
				want = base64.StdEncoding.EncodeToString([]byte("PNG-BYTES"))
			}
			if first["url"] != ok || first["b64_json"] != want {
				t.Errorf("first item = %v, want url kept and b64_json %v", first, want)
			}
			if second["url"] != missing || second["b64_json"] != nil {
				t.Errorf("second item = %v, want the url kept without b64_json", second)
			}
		})
	}
}

func TestImageEditsTakeMultipartAndGenerationsOnlyJSON(t *testing.T) {
	pe, v := newImageEnv(t)
	v.submitBody = `{"id":"img-1","urls":["https://cdn.example/x.png"]}`
	ct, body := protoMultipart(t, map[string]string{"model": "img-sync", "prompt": "add a hat"}, "image", "in.png", "PNG")
	a := pe.call(http.MethodPost, "/v1/images/edits", userKey, ct, body)
	if a.status != 200 {
		t.Fatalf("edit: %d %s", a.status, a.raw)
	}
	sub := v.received()[0]
	if files, _ := sub["files"].([]any); sub["op"] != "edit" || len(files) != 1 || files[0] != "request_file:image" {
		t.Errorf("vendor received %v, want the edit operation and the upload's ref", sub)
	}
	if a := pe.call(http.MethodPost, "/v1/images/generations", userKey, ct, body); a.status != http.StatusBadRequest {
		t.Errorf("multipart generation: %d %s, want 400", a.status, a.raw)
	}
}

func TestImageImmediateFailureAnswers400WithTheReasonAndRefunds(t *testing.T) {
	pe, v := newImageEnv(t)
	v.submitBody = `{"id":"img-1","error":"prompt rejected by safety system"}`
	a := pe.post("/v1/images/generations", userKey, `{"model":"img-sync","prompt":"x"}`)
	e, _ := a.json["error"].(map[string]any)
	if a.status != http.StatusBadRequest || e["message"] != "prompt rejected by safety system" {
		t.Errorf("failed image: %d %s", a.status, a.raw)
	}
	if got := pe.quota(pe.alice); got != 1_000_000 {
		t.Errorf("quota = %d, want refunded", got)
	}
}

func TestImageTaskIsPolledInsideTheRequest(t *testing.T) {
	pe, v := newImageEnv(t, `{"status":"running"}`, `{"status":"done","urls":["https://cdn.example/a.png"]}`)
	a := pe.post("/v1/images/generations", userKey, `{"model":"img-async","prompt":"x"}`)
	if a.status != 200 || !strings.Contains(string(a.raw), "https://cdn.example/a.png") {
		t.Fatalf("polled image: %d %s", a.status, a.raw)
	}
	tk := pe.task(pe.lastTask(t))
	if tk.Status != task.StatusSuccess || tk.Data == nil || tk.BillingStatus != task.BillingSettled {
		t.Errorf("task = %s data=%s billing=%s, want SUCCESS with the polling snapshot kept, settled", tk.Status, tk.Data, tk.BillingStatus)
	}
	if v.polls < 2 {
		t.Errorf("vendor polls = %d, want the request to have polled", v.polls)
	}
}

func TestImageTaskFailureWhilePolledAnswers400(t *testing.T) {
	pe, _ := newImageEnv(t, `{"status":"failed","error":"nsfw"}`)
	a := pe.post("/v1/images/generations", userKey, `{"model":"img-async","prompt":"x"}`)
	if e, _ := a.json["error"].(map[string]any); a.status != http.StatusBadRequest || e["message"] != "nsfw" {
		t.Errorf("failed image: %d %s", a.status, a.raw)
	}
}

func TestImageTimeoutAnswers504AndThePollerSettlesLater(t *testing.T) {
	pe, v := newImageEnv(t, `{"status":"running"}`)
	pe.withHTTPOptions(func(o *Options) { o.ProtocolTimeout = 40 * time.Millisecond })
	a := pe.post("/v1/images/generations", userKey, `{"model":"img-async","prompt":"x"}`)
	e, _ := a.json["error"].(map[string]any)
	if a.status != http.StatusGatewayTimeout || e["code"] != "task_timeout" {
		t.Fatalf("slow image: %d %s, want 504 task_timeout", a.status, a.raw)
	}
	id := pe.lastTask(t)
	if tk := pe.task(id); tk.Ended() || tk.BillingStatus != task.BillingHeld {
		t.Fatalf("task after the timeout = %s/%s, want still running and held", tk.Status, tk.BillingStatus)
	}
	v.setScript(`{"status":"done","urls":["https://cdn.example/late.png"]}`)
	pe.tick(2)
	if tk := pe.task(id); tk.Status != task.StatusSuccess || tk.BillingStatus != task.BillingSettled {
		t.Errorf("task after background polling = %s/%s, want SUCCESS and settled", tk.Status, tk.BillingStatus)
	}
	if got := pe.quota(pe.alice); got != 1_000_000-1_000 {
		t.Errorf("quota = %d, want one call charged once", got)
	}
}

func TestImageClientThatDisconnectsLeavesTheTaskToThePoller(t *testing.T) {
	pe, v := newImageEnv(t, `{"status":"running"}`)
	// The client leaves once its task is submitted and the request waits
	// on it; leaving on a fixed timer instead could come before the
	// submission on a loaded machine, when there is no task to leave.
	ctx, leave := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, pe.srv.URL+"/v1/images/generations", strings.NewReader(`{"model":"img-async","prompt":"x"}`))
	req.Header.Set("Authorization", "Bearer "+userKey)
	req.Header.Set("Content-Type", "application/json")
	answered := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	var id string
	waitFor(t, "the task to be submitted", func() bool {
		ts, _, err := pe.svc.Store().List(t.Context(), task.Filter{}, store.Page{Page: 1, PageSize: 1})
		if err != nil || len(ts) == 0 || ts[0].Status == "" || ts[0].UpstreamID == "" {
			return false
		}
		id = ts[0].PublicID
		return true
	})
	leave()
	if code := <-answered; code != 0 {
		t.Fatalf("the request answered %d; want the client to give up first", code)
	}
	waitFor(t, "the abandoned wait to stop polling", func() bool {
		before := pe.task(id).UpdatedAt
		time.Sleep(20 * time.Millisecond)
		return pe.task(id).UpdatedAt == before
	})
	if tk := pe.task(id); tk.Ended() || tk.PollFailures != 0 || tk.BillingStatus != task.BillingHeld {
		t.Fatalf("abandoned task = %s failures=%d billing=%s, want running, no counted failures, held", tk.Status, tk.PollFailures, tk.BillingStatus)
	}
	v.setScript(`{"status":"done","urls":["https://cdn.example/late.png"]}`)
	// The abandoned wait may still hold the task on a loaded machine (its
	// last look can outlast the quiet spell above) and end it itself, so
	// the poller's ticks go on until the task is ended and settled.
	waitFor(t, "background polling to end and settle the task", func() bool {
		pe.tick(1)
		tk := pe.task(id)
		return tk.Status == task.StatusSuccess && tk.BillingStatus == task.BillingSettled
	})
}
