package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

const (
	testRootToken  = "root-token-for-tests"
	testChannelKey = "sk-upstream-very-secret-key"
)

// env is one API over a fresh SQLite database with a few users.
type env struct {
	t       *testing.T
	d       Deps
	api     *API
	mux     *http.ServeMux
	reloads atomic.Int64
	ids     map[string]int64 // fixture name → id
	bodies  []string         // every response body, for secret checks
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	logger := slog.New(slog.DiscardHandler)
	w := billing.NewWriter(st, logger, 20*time.Millisecond, 256)
	t.Cleanup(func() { _ = w.Close(context.Background()); st.Close() })
	e := &env{t: t, ids: map[string]int64{}}
	e.d = Deps{
		Store:     st,
		Billing:   billing.NewService(billing.NewMemoryBalances(st), w, 500000),
		Keys:      auth.NewKeys(st, time.Minute),
		Sessions:  auth.NewSessions(st.Sessions(), "test-secret", time.Hour),
		Router:    routing.NewRouter(routing.NewHealth(nil, nil)),
		RootToken: testRootToken,
		Version:   "1.2.3-test",
		Logger:    logger,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "turnpike_up 1\n")
		}),
		TestChannel: fakeChannelTest,
		SeedMarks:   st.Traffic(),
		// Made by this test, so no older release seeded it.
		FreshDatabase: true,
	}
	e.d.Reload = func(ctx context.Context) error {
		e.reloads.Add(1)
		return e.d.Billing.Reload(ctx, st)
	}
	e.api = New(e.d)
	e.mux = http.NewServeMux()
	e.api.Register(e.mux)
	if _, _, err := EnsureRoot(ctx, e.d, "root-pass"); err != nil {
		t.Fatalf("EnsureRoot: %v", err)
	}
	root, _ := st.Users().GetByUsername(ctx, "root")
	e.ids["root"] = root.ID
	e.addUser("admin", store.RoleAdmin, 0)
	e.addUser("admin2", store.RoleAdmin, 0)
	e.addUser("alice", store.RoleUser, 1000)
	e.addUser("bob", store.RoleUser, 0)
	return e
}

// fixtureHashes caches bcrypt hashes across tests: hashing is slow by
// design and the fixtures reuse the same passwords.
var fixtureHashes sync.Map

func fixtureHash(pw string) string {
	if h, ok := fixtureHashes.Load(pw); ok {
		return h.(string)
	}
	h, _ := auth.HashPassword(pw)
	fixtureHashes.Store(pw, h)
	return h
}

// fakeChannelTest passes channels whose name starts with "good" and fails
// the rest with an error that quotes the key, as careless upstreams do.
func fakeChannelTest(_ context.Context, c *store.Channel) (time.Duration, error) {
	if strings.HasPrefix(c.Name, "good") {
		return 42 * time.Millisecond, nil
	}
	return 0, errors.New("upstream said 401: invalid key " + c.Key)
}

func (e *env) addUser(name, role string, quota int64) {
	e.t.Helper()
	ctx := context.Background()
	hash := fixtureHash(name + "-pass")
	u := &store.User{Username: name, PasswordHash: hash, Role: role, Group: "default", Status: store.StatusEnabled}
	if err := e.d.Store.Users().Create(ctx, u); err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	if quota > 0 {
		if _, err := e.d.Billing.Credit(ctx, billing.Credit{UserID: u.ID, Delta: quota, Note: "fixture"}); err != nil {
			e.t.Fatal(err)
		}
	}
	e.ids[name] = u.ID
}

// expand replaces {name} with the fixture id of that name.
func (e *env) expand(s string) string {
	for name, id := range e.ids {
		s = strings.ReplaceAll(s, "{"+name+"}", strconv.FormatInt(id, 10))
	}
	return s
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// do sends a request as who: "" (anonymous), "root" (the root token), or a
// fixture user signed in with a session cookie.
func (e *env) do(who, method, path, body string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(e.expand(body))
	}
	req := httptest.NewRequest(method, e.expand(path), rd)
	switch who {
	case "":
	case "root":
		req.Header.Set("Authorization", "Bearer "+testRootToken)
	default:
		id, ok := e.ids[who]
		if !ok {
			e.t.Fatalf("no fixture user %q", who)
		}
		tok, _, err := e.d.Sessions.Start(context.Background(), id)
		if err != nil {
			e.t.Fatalf("start a session: %v", err)
		}
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: tok})
	}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	e.bodies = append(e.bodies, res.raw)
	if strings.HasPrefix(strings.TrimSpace(res.raw), "{") {
		if err := json.Unmarshal(rec.Body.Bytes(), &res.body); err != nil {
			e.t.Fatalf("%s %s: bad JSON %q: %v", method, path, res.raw, err)
		}
	}
	return res
}

// scenario is one request and what must come back.
type scenario struct {
	name   string
	who    string
	method string
	path   string
	body   string
	status int
	// want holds top-level members to compare; "error.code" reaches into
	// the error object.
	want  map[string]any
	check func(t *testing.T, e *env, r response)
}

func (e *env) run(scenarios []scenario) {
	e.t.Helper()
	for _, sc := range scenarios {
		e.t.Run(sc.name, func(t *testing.T) {
			r := e.do(sc.who, sc.method, sc.path, sc.body)
			if r.status != sc.status {
				t.Fatalf("%s %s as %q: status %d, want %d; body %s", sc.method, sc.path, sc.who, r.status, sc.status, r.raw)
			}
			if r.status >= 400 {
				assertErrorShape(t, r)
			}
			for k, want := range sc.want {
				got := lookup(r.body, k)
				if !sameValue(got, e.expandValue(want)) {
					t.Errorf("%s: got %v (%T), want %v; body %s", k, got, got, want, r.raw)
				}
			}
			if sc.check != nil {
				sc.check(t, e, r)
			}
		})
	}
}

func (e *env) expandValue(v any) any {
	if s, ok := v.(string); ok && strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		if id, ok := e.ids[s[1:len(s)-1]]; ok {
			return float64(id)
		}
	}
	return v
}

func lookup(m map[string]any, path string) any {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		if list, ok := cur.([]any); ok {
			// "keys.1.state" reaches into a list by index.
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(list) {
				return nil
			}
			cur = list[i]
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	return cur
}

func sameValue(got, want any) bool {
	switch w := want.(type) {
	case int:
		return got == float64(w)
	case int64:
		return got == float64(w)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	return string(gb) == string(wb)
}

// assertErrorShape checks the contract's error object.
func assertErrorShape(t *testing.T, r response) {
	t.Helper()
	if r.status == http.StatusMethodNotAllowed {
		return
	}
	code, _ := lookup(r.body, "error.code").(string)
	msg, _ := lookup(r.body, "error.message").(string)
	if code == "" || msg == "" {
		t.Fatalf("error without code and message: %s", r.raw)
	}
}

// assertNeverShown fails when secret appears in any response so far.
func (e *env) assertNeverShown(secret string) {
	e.t.Helper()
	for _, b := range e.bodies {
		if strings.Contains(b, secret) {
			e.t.Fatalf("secret %q leaked in a response: %s", secret, b)
		}
	}
}

func items(t *testing.T, r response) []map[string]any {
	t.Helper()
	raw, ok := r.body["items"].([]any)
	if !ok {
		t.Fatalf("no items list: %s", r.raw)
	}
	out := make([]map[string]any, 0, len(raw))
	for _, it := range raw {
		out = append(out, it.(map[string]any))
	}
	return out
}

func wantTotal(n int) func(t *testing.T, e *env, r response) {
	return func(t *testing.T, _ *env, r response) {
		if got := r.body["total"]; got != float64(n) {
			t.Fatalf("total = %v, want %d; body %s", got, n, r.raw)
		}
		items(t, r)
	}
}

func newRecorder(e *env, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	return rec
}
