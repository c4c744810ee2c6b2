package task

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

const (
	userKey   = "sk-task-user-key-0001"
	otherKey  = "sk-task-other-key-0002"
	vendorKey = "vendor-secret-key-xyz"
)

// staticGenerations serves one fixed generation.
type staticGenerations struct {
	gen atomic.Pointer[plugin.Generation]
}

func (g *staticGenerations) Current() *plugin.Generation { return g.gen.Load() }

// loadPlugin compiles and validates a testdata plugin.
func loadPlugin(t testing.TB, name string) *plugin.Loaded {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	l, err := plugin.LoadSource(name, string(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Pool.Close)
	return l
}

// env is the task pipeline on a real SQLite file, with a user "alice"
// (quota 1,000,000), another user "bob", and fake vendors.
type env struct {
	t       *testing.T
	dbPath  string
	plugins []*plugin.Loaded
	gens    *staticGenerations
	opts    Options

	st      *sqlstore.Store
	writer  *billing.Writer
	billing *billing.Service
	router  *routing.Router
	svc     *Service
	srv     *httptest.Server
	alice   int64
	bob     int64
}

func newEnv(t *testing.T, plugins ...string) *env {
	t.Helper()
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "tasks.db"), gens: &staticGenerations{},
		opts: Options{PollInterval: time.Millisecond, MaxFailures: 3, Timeout: time.Hour, RetryCount: 2, UpstreamTimeout: 5 * time.Second, Node: "node-a"}}
	for _, p := range plugins {
		e.plugins = append(e.plugins, loadPlugin(t, p))
	}
	e.gens.gen.Store(plugin.NewGeneration(1, "r1", e.plugins, nil))
	e.open()
	t.Cleanup(e.close)
	ctx := context.Background()
	e.alice = e.user("alice", userKey, 1_000_000)
	e.bob = e.user("bob", otherKey, 1_000_000)
	e.price(store.ModelPrice{Name: "acme-v1", Extra: json.RawMessage(`{"per_unit":{"seconds":0.01}}`)})
	e.price(store.ModelPrice{Name: "acme-fast", PerCall: 0.002})
	e.price(store.ModelPrice{Name: "bulk-song", PerCall: 0.02})
	_ = ctx
	return e
}

// open builds every component on the database file, as a process start does.
func (e *env) open() {
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, "sqlite:"+e.dbPath)
	if err != nil {
		e.t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.st = st
	e.writer = billing.NewWriter(st, log, 5*time.Millisecond, 256)
	e.billing = billing.NewService(billing.NewMemoryBalances(st), e.writer, 500000)
	if err := e.billing.Reload(ctx, st); err != nil {
		e.t.Fatal(err)
	}
	e.router = routing.NewRouter(routing.NewHealth(nil, nil))
	e.reloadChannels()
	e.svc = New(Deps{Store: st, Billing: e.billing, Router: e.router, Keys: auth.NewKeys(st, time.Minute),
		Generations: e.gens, Client: &http.Client{}, Logger: log, Options: e.opts, RootToken: "root-token"})
	mux := http.NewServeMux()
	e.svc.Register(mux)
	mux.Handle("/", e.svc.NativeHandler())
	e.srv = httptest.NewServer(mux)
}

// close stops everything and flushes billing, as a graceful shutdown does.
func (e *env) close() {
	if e.srv == nil {
		return
	}
	e.srv.Close()
	_ = e.writer.Close(context.Background())
	e.st.Close()
	e.srv = nil
}

// restart closes the process and opens a new one on the same database.
func (e *env) restart() {
	e.close()
	e.open()
}

func (e *env) user(name, key string, quota int64) int64 {
	ctx := context.Background()
	u := &store.User{Username: name, Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := e.st.Users().Create(ctx, u); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.billing.TopUp(ctx, u.ID, quota, "test"); err != nil {
		e.t.Fatal(err)
	}
	tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: auth.HashKey(key), KeyMasked: auth.MaskKey(key), Quota: -1, Status: store.StatusEnabled}
	if err := e.st.Tokens().Create(ctx, tok); err != nil {
		e.t.Fatal(err)
	}
	e.flush()
	return u.ID
}

func (e *env) price(p store.ModelPrice) {
	ctx := context.Background()
	if err := e.st.Prices().Upsert(ctx, p); err != nil {
		e.t.Fatal(err)
	}
	if err := e.billing.Reload(ctx, e.st); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) reloadChannels() {
	all, err := e.st.Channels().All(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	e.router.Swap(routing.NewTable(all))
}

// channel adds a type 61 channel binding pluginKey at baseURL.
func (e *env) channel(name, pluginKey, baseURL string, models []string, mod func(*store.Channel)) *store.Channel {
	c := &store.Channel{Name: name, Type: plugin.ChannelTypeTaskPlugin, BaseURL: baseURL, Key: vendorKey, Models: models,
		Groups: []string{"default"}, Weight: 1, Status: store.StatusEnabled, Settings: map[string]any{"task_plugin_key": pluginKey}}
	if mod != nil {
		mod(c)
	}
	if err := e.st.Channels().Create(context.Background(), c); err != nil {
		e.t.Fatal(err)
	}
	e.reloadChannels()
	return c
}

func (e *env) flush() {
	if err := e.writer.Flush(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// quota is a user's stored balance after flushing the ledger.
func (e *env) quota(userID int64) int64 {
	e.flush()
	u, err := e.st.Users().Get(context.Background(), userID)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.Quota
}

// logs lists the usage-log rows of a type for a user, oldest first.
func (e *env) logs(userID int64, typ string) []store.UsageLog {
	e.flush()
	ls, _, err := e.st.Logs().List(context.Background(), store.LogFilter{UserID: userID, Type: typ}, store.Page{Page: 1, PageSize: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, j := 0, len(ls)-1; i < j; i, j = i+1, j-1 {
		ls[i], ls[j] = ls[j], ls[i]
	}
	return ls
}

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

func (e *env) task(publicID string) *Task {
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
