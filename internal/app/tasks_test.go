package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
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

// gateway is one running app over a database file.
type gateway struct {
	app    *App
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func startGateway(t *testing.T, cfg config.Config) *gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := New(ctx, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	g := &gateway{app: a, cancel: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() { g.done <- a.Serve(ctx, func(addr string) { ready <- addr }) }()
	g.addr = "http://" + <-ready
	return g
}

func (g *gateway) stop(t *testing.T) {
	g.cancel()
	if err := <-g.done; err != nil {
		t.Fatal(err)
	}
}

func (g *gateway) do(t *testing.T, method, path, bearer string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, g.addr+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	if out == nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

func (g *gateway) waitTask(t *testing.T, id, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, task := g.do(t, "GET", "/v1/tasks/"+id, "sk-task-user", nil)
		if task["status"] == want {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never reached %s: %v", id, want, task)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	cfg.RootToken = "root-secret"
	cfg.RootPassword = "root-pass"
	cfg.TaskPollInterval = 0.05
	cfg.Users = []config.SeedUser{{Username: "bob", Password: "pw", Role: "user", Group: "default", Quota: 1_000_000}}
	cfg.Tokens = []config.SeedToken{{Name: "k", User: "bob", Key: "sk-task-user"}}
	cfg.Models = map[string]config.SeedPrice{"acme-v1": {PerCall: 0.1}}

	g := startGateway(t, cfg)
	if code, body := g.do(t, "POST", "/api/plugin/task", "root-secret", map[string]any{"source": string(src)}); code/100 != 2 || body["active"] != true {
		t.Fatalf("upload: %d %v", code, body)
	}
	code, ch := g.do(t, "POST", "/api/channels", "root-secret", map[string]any{
		"name": "acme", "type": "task_plugin", "base_url": vsrv.URL, "key": "vendor-secret",
		"models": []string{"acme-v1"}, "settings": map[string]any{"task_plugin_key": "acme"}})
	if code != 200 {
		t.Fatalf("channel: %d %v", code, ch)
	}
	submit := func() string {
		code, body := g.do(t, "POST", "/acme/v1/videos", "sk-task-user", map[string]any{"model": "acme-v1", "prompt": "a cat"})
		id, _ := body["id"].(string)
		if code != 200 || !strings.HasPrefix(id, "task_") {
			t.Fatalf("submit: %d %v", code, body)
		}
		return id
	}
	okTask, failTask := submit(), submit()
	if strings.Contains(fmt.Sprint(g.do(t, "GET", "/v1/tasks/"+okTask, "sk-task-user", nil)), "vendor-secret") {
		t.Fatal("the channel key leaked into the task view")
	}
	g.stop(t)

	v.set("job-1", "done")
	v.set("job-2", "gone") // the vendor lost it: 404 → failure and refund
	g = startGateway(t, cfg)
	defer g.stop(t)
	done := g.waitTask(t, okTask, "SUCCESS")
	g.waitTask(t, failTask, "FAILURE")
	if done["task_id"] != okTask {
		t.Fatalf("task view %v", done)
	}
	if code, _ := g.do(t, "GET", "/v1/tasks/"+okTask, "root-secret", nil); code != 401 {
		t.Fatalf("a non-key credential read a task: %d", code)
	}

	// Let the writer land the refund, then check money through a fresh store.
	time.Sleep(300 * time.Millisecond)
	g.app.Writer.Flush(context.Background())
	st, err := sqlstore.Open(context.Background(), cfg.Database)
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
