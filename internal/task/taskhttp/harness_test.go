package taskhttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/task"
	"github.com/turnpike-gw/turnpike/internal/task/tasktest"
)

const (
	userKey   = "sk-task-user-key-0001"
	otherKey  = "sk-task-other-key-0002"
	vendorKey = tasktest.VendorKey
)

// env is the task pipeline and its handlers on a real SQLite file, with a
// user "alice" (quota 1,000,000), another user "bob", and fake vendors.
type env struct {
	t        *testing.T
	dbPath   string
	plugins  []*plugin.Loaded
	gens     *tasktest.Generations
	opts     task.Options
	httpOpts Options
	// client is the upstream client each process start hands the core.
	client *http.Client

	world   *tasktest.World
	st      *sqlstore.Store
	writer  *billing.Writer
	billing *billing.Service
	router  *routing.Router
	svc     *task.Service
	http    *Handlers
	srv     *httptest.Server
	alice   int64
	bob     int64
}

func newEnv(t *testing.T, plugins ...string) *env {
	t.Helper()
	e := &env{t: t, dbPath: sqlitetest.Path(t), client: &http.Client{},
		opts: task.Options{PollInterval: time.Millisecond, MaxFailures: 3, Timeout: time.Hour, RetryCount: 2, UpstreamTimeout: 5 * time.Second, Node: "node-a"}}
	for _, p := range plugins {
		e.plugins = append(e.plugins, tasktest.LoadPlugin(t, p))
	}
	e.gens = tasktest.NewGenerations(e.plugins)
	e.open()
	t.Cleanup(e.close)
	e.alice = e.user("alice", userKey, 1_000_000)
	e.bob = e.user("bob", otherKey, 1_000_000)
	e.price(store.ModelPrice{Name: "acme-v1", Extra: json.RawMessage(`{"per_unit":{"seconds":0.01}}`)})
	e.price(store.ModelPrice{Name: "acme-fast", PerCall: 0.002})
	e.price(store.ModelPrice{Name: "bulk-song", PerCall: 0.02})
	return e
}

// open builds every component on the database file, as a process start does.
func (e *env) open() {
	w := tasktest.Open(e.t, e.dbPath)
	e.world, e.st, e.writer, e.billing, e.router = w, w.Store, w.Writer, w.Billing, w.Router
	e.svc = task.New(task.Deps{Store: w.Store, Billing: w.Billing, Router: w.Router,
		Generations: e.gens, Client: e.client, Logger: w.Log, Options: e.opts})
	e.http = New(Deps{Core: e.svc, Keys: w.Keys, Logger: w.Log, RootToken: "root-token", Options: e.httpOpts})
	mux := http.NewServeMux()
	e.http.Register(mux)
	mux.Handle("/", e.http.NativeHandler())
	e.srv = httptest.NewServer(mux)
}

// close stops everything and flushes billing, as a graceful shutdown does.
func (e *env) close() {
	if e.srv == nil {
		return
	}
	e.srv.Close()
	e.world.Close()
	e.srv = nil
}

// restart closes the process and opens a new one on the same database.
func (e *env) restart() {
	e.close()
	e.open()
}

func (e *env) user(name, key string, quota int64) int64 { return e.world.User(name, key, quota) }

func (e *env) price(p store.ModelPrice) { e.world.Price(p) }

func (e *env) reloadChannels() { e.world.ReloadChannels() }

// channel adds a type 61 channel binding pluginKey at baseURL.
func (e *env) channel(name, pluginKey, baseURL string, models []string, mod func(*store.Channel)) *store.Channel {
	return e.world.Channel(name, pluginKey, baseURL, models, mod)
}

func (e *env) flush() { e.world.Flush() }

// quota is a user's stored balance after flushing the ledger.
func (e *env) quota(userID int64) int64 { return e.world.Quota(userID) }

// logs lists the usage-log rows of a type for a user, oldest first.
func (e *env) logs(userID int64, typ string) []store.UsageLog { return e.world.Logs(userID, typ) }

func (e *env) do(method, path, key, contentType, body string) (int, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s %s: answer is not a JSON object: %s", method, path, raw)
	}
	return resp.StatusCode, out
}

func (e *env) postJSON(path, key, body string) (int, map[string]any) {
	return e.do(http.MethodPost, path, key, "application/json", body)
}

// tick runs poll rounds until n have passed, letting next_poll_at come due.
func (e *env) tick(n int) {
	for range n {
		time.Sleep(3 * time.Millisecond)
		e.svc.Poller().Tick(context.Background())
	}
}

func (e *env) task(publicID string) *task.Task {
	t, err := e.svc.Store().GetPublic(context.Background(), publicID)
	if err != nil {
		e.t.Fatal(err)
	}
	return t
}

// vendor is a fake per_task video vendor that checks what it receives and
// answers polls from a script per job.
type vendor struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	n       int
	submits []map[string]any
	headers []http.Header
	// script is what GET /v1/jobs/{id} answers, one entry per poll; the
	// last entry repeats.
	script []vendorAnswer
	polls  int
	// submitStatus, when set, is the status of every submit answer.
	submitStatus int
	submitBody   string
}

type vendorAnswer struct {
	status int
	body   string
}

func newVendor(t *testing.T, script ...vendorAnswer) *vendor {
	v := &vendor{t: t, script: script}
	v.srv = httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.srv.Close)
	return v
}

func (v *vendor) serve(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+vendorKey {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"bad key"}`))
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/jobs":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			v.t.Errorf("vendor got a submit body that is not JSON: %v", err)
		}
		v.submits = append(v.submits, body)
		v.headers = append(v.headers, r.Header.Clone())
		if v.submitStatus != 0 {
			w.WriteHeader(v.submitStatus)
			_, _ = w.Write([]byte(v.submitBody))
			return
		}
		v.n++
		_, _ = w.Write([]byte(`{"id":"job-` + string(rune('0'+v.n)) + `"}`))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/jobs/"):
		a := v.script[min(v.polls, len(v.script)-1)]
		v.polls++
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (v *vendor) submitCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.submits)
}
