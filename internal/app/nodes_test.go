package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// twoNodes starts two gateways over one database (and one Redis when
// TURNPIKE_TEST_REDIS is set), as a deployment behind a load balancer.
func twoNodes(t *testing.T, opts ...testkit.Option) (*testkit.Gateway, *testkit.Gateway) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "shared.db")
	redis := os.Getenv("TURNPIKE_TEST_REDIS")
	shared := testkit.WithConfig(func(c *config.Config) {
		c.Database = db
		c.Redis = redis
	})
	a := testkit.Start(t, append(opts, shared)...)
	b := testkit.Start(t, append(opts, shared)...)
	return a, b
}

func TestLogoutOnOneNodeEndsTheSessionOnTheOther(t *testing.T) {
	a, b := twoNodes(t, testkit.WithUsers(config.SeedUser{Username: "ada", Password: "ada-pass", Role: "user", Group: "default"}))
	cookie := a.Login(t, "ada", "ada-pass")
	me := func(g *testkit.Gateway) int {
		return browserRequest{method: "GET", path: "/api/auth/me", cookie: true}.sendStatus(t, g, cookie)
	}
	if me(b) != http.StatusOK {
		t.Fatal("a session made on node A does not work on node B")
	}
	if s := (browserRequest{method: "POST", path: "/api/auth/logout", cookie: true}).sendStatus(t, a, cookie); s != http.StatusOK {
		t.Fatalf("logout: %d", s)
	}
	if s := me(b); s != http.StatusUnauthorized {
		t.Fatalf("node B still accepts the cookie after logout on node A: %d", s)
	}
}

func TestFailedSignInsCountAcrossNodesWithRedis(t *testing.T) {
	if os.Getenv("TURNPIKE_TEST_REDIS") == "" {
		t.Skip("set TURNPIKE_TEST_REDIS (redis://127.0.0.1:6379/0) to check sign-in counts shared through Redis")
	}
	// A username of its own, so earlier runs against the same Redis do not
	// count; the address count (all tests come from 127.0.0.1) is cleared
	// before and after, so this test neither sees nor leaves failures.
	user := fmt.Sprintf("ada%d", time.Now().UnixNano())
	clearAddressCount(t)
	t.Cleanup(func() { clearAddressCount(t) })
	a, b := twoNodes(t, testkit.WithUsers(config.SeedUser{Username: user, Password: "right-pass", Role: "user", Group: "default"}))
	login := func(g *testkit.Gateway, pw string) *http.Response {
		resp := g.DoRaw(t, "POST", "/api/auth/login", "", map[string]string{"username": user, "password": pw})
		resp.Body.Close()
		return resp
	}
	for i := range 40 {
		g := []*testkit.Gateway{a, b}[i%2]
		resp := login(g, "wrong")
		if resp.StatusCode == http.StatusTooManyRequests {
			if i < 10 || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("429 after %d failures, Retry-After %q", i, resp.Header.Get("Retry-After"))
			}
			return
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
	}
	t.Fatal("40 wrong passwords spread over two nodes were never throttled")
}

func (b browserRequest) sendStatus(t *testing.T, g *testkit.Gateway, cookie *http.Cookie) int {
	status, body := b.send(t, g, cookie, "")
	if strings.Contains(body, "sk-") {
		t.Fatalf("an answer holds a key: %s", body)
	}
	return status
}

// clearAddressCount forgets the failed sign-ins counted for 127.0.0.1.
func clearAddressCount(t *testing.T) {
	rdb := openRedis(t, os.Getenv("TURNPIKE_TEST_REDIS"))
	if err := rdb.Del(context.Background(), "turnpike:login:addr:127.0.0.1").Err(); err != nil {
		t.Fatal(err)
	}
}
