package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const guardRoot = "root-token-for-the-outage-test"

// dbProxy stands between the gateway and PostgreSQL, and can make the
// database stop answering (freeze: connections stay open, nothing comes
// back) or vanish (kill: every connection is closed and new ones refused).
type dbProxy struct {
	t      *testing.T
	target string
	addr   string

	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	frozen bool
	thaw   *sync.Cond
}

func newDBProxy(t *testing.T, target string) *dbProxy {
	p := &dbProxy{t: t, target: target}
	p.thaw = sync.NewCond(&p.mu)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.freeze(false); p.kill() })
	return p
}

func (p *dbProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go p.pump(up, c)
			go p.pump(c, up)
		}
	}()
}

// pump copies src to dst, holding every chunk while the proxy is frozen.
func (p *dbProxy) pump(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.frozen {
			p.thaw.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (p *dbProxy) freeze(on bool) {
	p.mu.Lock()
	p.frozen = on
	p.mu.Unlock()
	p.thaw.Broadcast()
}

func (p *dbProxy) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *dbProxy) revive() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("the proxy cannot listen again: %v", err)
	}
	p.serve(ln)
}

type guardCall struct {
	method, path, body string
	cookie             bool
}

// outageCalls are /api calls that need the database, each with another
// way in: the root token, a session cookie, the task package's route.
var outageCalls = []guardCall{
	{method: "GET", path: "/api/users"},
	{method: "GET", path: "/api/tokens"},
	{method: "GET", path: "/api/logs"},
	{method: "GET", path: "/api/tasks"},
	{method: "POST", path: "/api/users", body: `{"username":"during-outage","password":"outage-password"}`},
	{method: "GET", path: "/api/auth/me", cookie: true},
	{method: "GET", path: "/api/tokens", cookie: true},
	{method: "GET", path: "/api/tasks", cookie: true},
}

// expectFastUnavailable sends every call at once and wants each answered
// 503 store_unavailable within 5 s.
func expectFastUnavailable(t *testing.T, g *testkit.Gateway, cookie *http.Cookie, calls []guardCall) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(c.method, g.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			if c.cookie {
				req.AddCookie(cookie)
			} else {
				req.Header.Set("Authorization", "Bearer "+guardRoot)
			}
			start := time.Now()
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
			took := time.Since(start)
			if err != nil {
				t.Errorf("%s %s: %v after %v", c.method, c.path, err, took)
				return
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code string } `json:"error"`
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(raw, &body)
			if resp.StatusCode != 503 || body.Error.Code != "store_unavailable" || took > 5*time.Second {
				t.Errorf("%s %s (cookie %v): %d %s after %v; want 503 store_unavailable within 5 s",
					c.method, c.path, c.cookie, resp.StatusCode, raw, took)
			}
		}()
	}
	wg.Wait()
}

// CONTRACT §16: when the database does not answer, /api calls fail within
// 5 s with 503 — whether it hangs or refuses connections.
func TestAPICallsFailFastWith503WhenPostgreSQLDoesNotAnswer(t *testing.T) {
	pg := os.Getenv("TURNPIKE_TEST_POSTGRES")
	if pg == "" {
		t.Skip("set TURNPIKE_TEST_POSTGRES to cut the gateway off its database")
	}
	dsn := testdb.Postgres(t, pg)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newDBProxy(t, u.Host)
	u.Host = proxy.addr
	g := testkit.Start(t, testkit.WithRootToken(guardRoot),
		testkit.WithUsers(config.SeedUser{Username: "ada", Password: "ada-password", Role: "admin", Group: "default"}),
		testkit.WithConfig(func(c *config.Config) { c.Database = u.String() }))
	cookie := g.Login(t, "ada", "ada-password")
	if code, _ := g.Do(t, "GET", "/api/users", guardRoot, nil); code != 200 {
		t.Fatalf("before the outage: %d", code)
	}

	proxy.freeze(true)
	expectFastUnavailable(t, g, cookie, outageCalls)
	if code, _ := g.Do(t, "GET", "/api/status", "", nil); code != 200 {
		t.Errorf("GET /api/status needs no database but answered %d", code)
	}
	proxy.freeze(false)
	if !testkit.WaitFor(10*time.Second, 100*time.Millisecond, func() bool {
		code, _ := g.Do(t, "GET", "/api/users", guardRoot, nil)
		return code == 200
	}) {
		t.Fatal("the gateway does not answer again after the database came back")
	}

	proxy.kill()
	expectFastUnavailable(t, g, cookie, outageCalls)
	proxy.revive()
	if !testkit.WaitFor(10*time.Second, 100*time.Millisecond, func() bool {
		code, _ := g.Do(t, "GET", "/api/users", guardRoot, nil)
		return code == 200
	}) {
		t.Fatal("the gateway does not answer again after the database restarted")
	}
}

// The same on SQLite, always run: another process holds the write lock, so
// writes wait on the busy timeout; the caller still has its answer within
// 5 s.
func TestAPIWritesFailFastWith503WhileSQLiteIsLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	g := testkit.Start(t, testkit.WithRootToken(guardRoot), testkit.WithConfig(func(c *config.Config) { c.Database = "sqlite:" + path }))
	db := testdb.Open(t, "sqlite", path)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The gateway's own start-up writes (rollup backfill, plugin generation)
	// may hold the lock for a moment; take it once they are done.
	var lockErr error
	if !testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool {
		_, lockErr = conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE")
		return lockErr == nil
	}) {
		t.Fatal(lockErr)
	}
	expectFastUnavailable(t, g, nil, []guardCall{
		{method: "POST", path: "/api/users", body: `{"username":"while-locked","password":"locked-password"}`},
	})
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if code, body := g.Do(t, "POST", "/api/users", guardRoot, map[string]any{"username": "after-lock", "password": "after-password"}); code != 200 {
		t.Fatalf("after the lock was released: %d %v", code, body)
	}
}
