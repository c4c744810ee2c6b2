package taskhttp

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

func TestSubmitTriesTheNextChannelBeforeAcceptanceAndBillsOnce(t *testing.T) {
	e := newEnv(t, "pertask.js")
	broken := newVendor(t, vendorAnswer{200, `{}`})
	broken.submitStatus, broken.submitBody = 503, `{"message":"overloaded"}`
	good := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	e.channel("acme-a", "acme", broken.srv.URL, []string{"acme-v1"}, func(c *store.Channel) { c.Priority = 10 })
	e.channel("acme-b", "acme", good.srv.URL, []string{"acme-v1"}, nil)
	code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	if broken.submitCount() != 1 || good.submitCount() != 1 {
		t.Errorf("submits: broken=%d good=%d, want 1 each", broken.submitCount(), good.submitCount())
	}
	if got := e.quota(e.alice); got != 975_000 {
		t.Errorf("quota = %d, want one reservation of 25000", got)
	}
	if n := len(e.logs(e.alice, store.LogConsume)); n != 1 {
		t.Errorf("%d consume rows, want 1", n)
	}
}

func TestSubmitErrorsReachTheClientReadableAndWithoutSecrets(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		request    string
		wantStatus int
		wantText   string
	}{
		{"a 4xx is worded by parseSubmitError", 400, `{"message":"prompt too long"}`, `{"model":"acme-v1","prompt":"p"}`, 400, "vendor says: prompt too long"},
		{"a plugin refusal keeps its status and code", 200, `{"refuse":"not allowed content"}`, `{"model":"acme-v1","prompt":"p"}`, 422, "not allowed content"},
		{"a hook error is scrubbed of the channel key", 200, `{}`, `{"model":"acme-v1","prompt":"p","explode":true}`, 400, "cannot build with key [redacted]"},
		{"a host outside the allow-list is refused", 200, `{}`, `{"model":"acme-v1","prompt":"p","target":"https://evil.test/steal"}`, 502, "evil.test:443"},
		{"an allow-listed host on another port is refused", 200, `{}`, `{"model":"acme-v1","prompt":"p","target":"https://cdn.acme.test/x"}`, 502, "cdn.acme.test:443"},
		{"a model outside the route's list is refused", 200, `{}`, `{"model":"acme-v1","prompt":"p"}`, 400, "not served"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "pertask.js")
			v := newVendor(t, vendorAnswer{200, `{}`})
			v.submitStatus, v.submitBody = tt.status, tt.body
			e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1", "acme-fast"}, nil)
			path := "/acme/v1/videos"
			if strings.Contains(tt.name, "route's list") {
				path = "/acme/v1/images"
			}
			code, out := e.postJSON(path, userKey, tt.request)
			errObj, _ := out["error"].(map[string]any)
			msg, _ := errObj["message"].(string)
			if code != tt.wantStatus || !strings.Contains(msg, tt.wantText) {
				t.Fatalf("got %d %v, want %d containing %q", code, out, tt.wantStatus, tt.wantText)
			}
			if strings.Contains(msg, vendorKey) {
				t.Errorf("the channel key leaked: %q", msg)
			}
			if errObj["status"] != float64(tt.wantStatus) {
				t.Errorf("native.error did not render the error: %v", out)
			}
			if got := e.quota(e.alice); got != 1_000_000 {
				t.Errorf("quota = %d after a refused submit, want untouched", got)
			}
			if n := len(e.logs(e.alice, store.LogConsume)); n != 0 {
				t.Errorf("%d consume rows for a refused submit", n)
			}
		})
	}
}

func TestOriginTasksMustBeTheCallersOwn(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
	_, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
	id := out["id"].(string)

	code, out := e.postJSON("/acme/v1/videos/"+id+"/extend", otherKey, `{"model":"acme-v1","prompt":"more"}`)
	if code != 404 {
		t.Fatalf("extending another user's task: %d %v, want 404", code, out)
	}
	code, out = e.postJSON("/acme/v1/videos/task_doesnotexist/extend", userKey, `{"model":"acme-v1","prompt":"more"}`)
	if code != 404 {
		t.Fatalf("extending an unknown task: %d %v, want 404", code, out)
	}
	code, out = e.postJSON("/acme/v1/videos/"+id+"/extend", userKey, `{"model":"acme-v1","prompt":"more"}`)
	if code != 200 {
		t.Fatalf("extending an own task: %d %v", code, out)
	}
	if got := v.submits[len(v.submits)-1]["extend"]; got != "job-1" {
		t.Errorf("the driver got origin upstream id %v, want job-1", got)
	}
	if strings.Contains(out["id"].(string), "job-") {
		t.Errorf("the renderer saw an upstream id: %v", out)
	}
	if tk := e.task(out["id"].(string)); tk.Action != "extend" {
		t.Errorf("action = %q, want the route's action", tk.Action)
	}
}

func TestImmediateResultWithoutRetentionSettlesAtSubmitAndIsNotQueryable(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t, vendorAnswer{200, `{}`})
	v.submitStatus, v.submitBody = 200, `{"id":"img-1","done":true,"url":"https://cdn.acme.test/i.png","extra":"kept"}`
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-fast"}, nil)
	code, out := e.postJSON("/acme/v1/images", userKey, `{"model":"acme-fast","prompt":"p"}`)
	if code != 200 || out["status"] != task.StatusSuccess {
		t.Fatalf("submit: %d %v", code, out)
	}
	if data, _ := out["data"].(map[string]any); data["extra"] != "kept" {
		t.Errorf("the submit renderer did not see the full data: %v", out)
	}
	id := out["id"].(string)
	tk := e.task(id)
	if tk.Data != nil || tk.BillingStatus != task.BillingSettled || tk.QuotaCharged != 1000 {
		t.Errorf("stored task = data %s, billing %s, charged %d", tk.Data, tk.BillingStatus, tk.QuotaCharged)
	}
	if code, _ := e.do(http.MethodGet, "/acme/v1/videos/"+id, userKey, "", ""); code != 404 {
		t.Errorf("query of a discarded result = %d, want 404", code)
	}
	if code, _ := e.do(http.MethodGet, "/v1/tasks/"+id, userKey, "", ""); code != 404 {
		t.Errorf("GET /v1/tasks of a discarded result = %d, want 404", code)
	}
	e.tick(1)
	if v.polls != 0 {
		t.Errorf("an immediate task was polled")
	}
}

func TestNativeRoutesNeedAKeyAndUnknownRoutesFallThrough(t *testing.T) {
	e := newEnv(t, "pertask.js")
	code, out := e.postJSON("/acme/v1/videos", "", `{"model":"acme-v1"}`)
	if code != 401 {
		t.Errorf("no key: %d %v", code, out)
	}
	code, _ = e.postJSON("/acme/v1/unknown", userKey, `{}`)
	if code != 404 {
		t.Errorf("unknown route: %d", code)
	}
	req, _ := http.NewRequest(http.MethodGet, "/nowhere", nil)
	if e.http.ServeNative(nil, req) {
		t.Error("ServeNative claimed a path no route matches")
	}
}

func TestAdminTaskListScopesByRole(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
	e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
	e.postJSON("/acme/v1/videos", otherKey, `{"model":"acme-v1","prompt":"q"}`)
	code, out := e.do(http.MethodGet, "/api/tasks?platform=acme", "root-token", "", "")
	if code != 200 || out["total"] != float64(2) {
		t.Fatalf("root list: %d %v", code, out)
	}
	item := out["items"].([]any)[0].(map[string]any)
	if _, leaked := item["upstream_id"]; leaked {
		t.Errorf("admin item shows the upstream id: %v", item)
	}
	if code, _ := e.do(http.MethodGet, "/api/tasks", userKey, "", ""); code != 401 {
		t.Errorf("an API key on /api/tasks = %d, want 401", code)
	}
	q := url.Values{"status": {task.StatusFailure}}
	if code, out := e.do(http.MethodGet, "/api/tasks?"+q.Encode(), "root-token", "", ""); code != 200 || out["total"] != float64(0) {
		t.Errorf("status filter: %d %v", code, out)
	}
}
