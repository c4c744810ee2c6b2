package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// counters returns the memory counter and, when TURNPIKE_TEST_REDIS is
// set, a Redis one under a prefix of its own.
func counters(t *testing.T) map[string]Counter {
	out := map[string]Counter{"memory": NewMemoryCounter()}
	addr := os.Getenv("TURNPIKE_TEST_REDIS")
	if addr == "" {
		return out
	}
	opts, err := redis.ParseURL(addr)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("TURNPIKE_TEST_REDIS is set but Redis does not answer: %v", err)
	}
	rc := NewRedisCounter(rdb)
	rc.prefix = fmt.Sprintf("turnpike-test:%d:", time.Now().UnixNano())
	out["redis"] = rc
	return out
}

func TestLoginThrottle(t *testing.T) {
	limits := ThrottleLimits{Window: time.Minute, PerAccount: 3, PerAddress: 5}
	for name, c := range counters(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			th := NewLoginThrottle(c, limits)
			cases := []struct {
				name    string
				run     func()
				user    string
				addr    string
				blocked bool
			}{
				{"a first attempt passes", func() {}, "alice", "10.0.0.1:1", false},
				{"the account is held after its limit of failures", func() {
					for range 3 {
						th.Failed(ctx, "alice", from("10.0.0.1:1"))
					}
				}, "alice", "10.0.0.9:1", true},
				{"the account limit ignores letter case", func() {}, "ALICE", "10.0.0.9:1", true},
				{"another account from a fresh address passes", func() {}, "bob", "10.0.0.2:1", false},
				{"the address is held after its limit over any accounts", func() {
					for i := range 2 {
						th.Failed(ctx, fmt.Sprintf("u%d", i), from("10.0.0.1:2"))
					}
				}, "carol", "10.0.0.1:3", true},
				{"a success clears the account but not the address", func() {
					th.Succeeded(ctx, "alice")
				}, "alice", "10.0.0.3:1", false},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					tc.run()
					wait, err := th.Blocked(ctx, tc.user, from(tc.addr))
					if err != nil {
						t.Fatal(err)
					}
					if (wait > 0) != tc.blocked {
						t.Fatalf("wait %v, want blocked=%v", wait, tc.blocked)
					}
					if tc.blocked && (wait > time.Minute || wait < time.Second) {
						t.Fatalf("wait %v is not within the window", wait)
					}
				})
			}
		})
	}
}

func TestMemoryCounterWindowEnds(t *testing.T) {
	c := NewMemoryCounter()
	now := time.Now()
	c.now = func() time.Time { return now }
	ctx := context.Background()
	c.Add(ctx, "k", time.Minute)
	c.Add(ctx, "k", time.Minute)
	if n, _, _ := c.Peek(ctx, "k"); n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
	now = now.Add(time.Minute)
	if n, _, _ := c.Peek(ctx, "k"); n != 0 {
		t.Fatalf("count after the window %d, want 0", n)
	}
}

// from is a sign-in request arriving from addr.
func from(addr string) *http.Request {
	r := httptest.NewRequest("POST", "/api/auth/login", nil)
	r.RemoteAddr = addr
	return r
}
