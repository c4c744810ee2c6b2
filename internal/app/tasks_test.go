package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// vendor is a fake asynchronous video vendor for the synthetic plugin in
// internal/task/testdata/pertask.js; it checks the credentials it gets.
type vendor struct {
	mu     sync.Mutex
	jobs   map[string]string // id → status
	nextID int
}

func (v *vendor) set(id, status string) {
	v.mu.Lock()
	v.jobs[id] = status
	v.mu.Unlock()
}

func (v *vendor) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer vendor-secret" {
			w.WriteHeader(401)
			return
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/jobs":
			v.nextID++
			id := fmt.Sprintf("job-%d", v.nextID)
			v.jobs[id] = "queued"
			fmt.Fprintf(w, `{"id":%q}`, id)
		case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/jobs/"):
			id := strings.TrimPrefix(r.URL.Path, "/v1/jobs/")
			status, ok := v.jobs[id]
			if !ok || status == "gone" {
				w.WriteHeader(404)
				return
			}
			fmt.Fprintf(w, `{"status":%q,"url":"https://cdn.example/%s.mp4"}`, status, id)
		default:
			w.WriteHeader(400)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// waitTask polls the task view until the task reaches want.
func waitTask(t *testing.T, g *testkit.Gateway, id, want string) map[string]any {
	t.Helper()
	var task map[string]any
	if !testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool {
		_, task = g.Do(t, "GET", "/v1/tasks/"+id, "sk-task-user", nil)
		return task["status"] == want
	}) {
		t.Fatalf("task %s never reached %s: %v", id, want, task)
	}
	return task
}

// TestUploadedPluginRunsTasksAcrossARestart drives the whole product: a
// root uploads a plugin, an admin binds a channel, a key submits through the
// plugin's native route, the gateway restarts mid-task, and the new process
// polls the task to success (charged) or to failure (refunded).
func TestUploadedPluginRunsTasksAcrossARestart(t *testing.T) {
	v := &vendor{jobs: map[string]string{}}
	vsrv := v.server(t)
	src, err := os.ReadFile("../task/testdata/pertask.js")
	if err != nil {
		t.Fatal(err)
	}
	g := testkit.Start(t,
		testkit.WithRootToken("root-secret"),
		testkit.WithPollInterval(50*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "bob", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "bob", Key: "sk-task-user"}),
		testkit.WithModels(map[string]config.SeedPrice{"acme-v1": {PerCall: 0.1}}),
	)
	if code, body := g.Do(t, "POST", "/api/plugin/task", "root-secret", map[string]any{"source": string(src)}); code/100 != 2 || body["active"] != true {
		t.Fatalf("upload: %d %v", code, body)
	}
	code, ch := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
		"name": "acme", "type": "task_plugin", "base_url": vsrv.URL, "key": "vendor-secret",
		"models": []string{"acme-v1"}, "settings": map[string]any{"task_plugin_key": "acme"}})
	if code != 200 {
		t.Fatalf("channel: %d %v", code, ch)
	}
	submit := func() string {
		code, body := g.Do(t, "POST", "/acme/v1/videos", "sk-task-user", map[string]any{"model": "acme-v1", "prompt": "a cat"})
		id, _ := body["id"].(string)
		if code != 200 || !strings.HasPrefix(id, "task_") {
			t.Fatalf("submit: %d %v", code, body)
		}
		return id
	}
	okTask, failTask := submit(), submit()
	if strings.Contains(fmt.Sprint(g.Do(t, "GET", "/v1/tasks/"+okTask, "sk-task-user", nil)), "vendor-secret") {
		t.Fatal("the channel key leaked into the task view")
	}
	g.Stop()

	v.set("job-1", "done")
	v.set("job-2", "gone") // the vendor lost it: 404 → failure and refund
	g.Restart()
	done := waitTask(t, g, okTask, "SUCCESS")
	waitTask(t, g, failTask, "FAILURE")
	if done["task_id"] != okTask {
		t.Fatalf("task view %v", done)
	}
	if code, _ := g.Do(t, "GET", "/v1/tasks/"+okTask, "root-secret", nil); code != 401 {
		t.Fatalf("a non-key credential read a task: %d", code)
	}

	// Let the writer land the refund, then check money through a fresh store.
	time.Sleep(300 * time.Millisecond)
	g.App.Writer.Flush(context.Background())
	st, err := sqlstore.Open(context.Background(), g.App.Config.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, _ := st.Users().GetByUsername(context.Background(), "bob")
	const perCall = 50000 // $0.1 × 500000
	if u.Quota != 1_000_000-perCall || u.UsedQuota != perCall {
		t.Fatalf("quota %d used %d, want one charged call of %d", u.Quota, u.UsedQuota, perCall)
	}
	refunds, _, _ := st.Logs().List(context.Background(), store.LogFilter{Type: store.LogRefund}, store.Page{})
	if len(refunds) != 1 {
		t.Fatalf("refund rows %d", len(refunds))
	}
}
