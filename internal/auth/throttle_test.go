package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
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
			attempt := func(user, addr string) time.Duration {
				t.Helper()
				wait, err := th.Attempt(ctx, user, from(addr))
				if err != nil {
					t.Fatal(err)
				}
				return wait
			}
			cases := []struct {
				name    string
				run     func()
				user    string
				addr    string
				blocked bool
			}{
				{"a first attempt passes", func() {}, "alice", "10.0.0.1:1", false},
				{"the account is held once its limit is used", func() {
					attempt("alice", "10.0.0.1:1")
					attempt("alice", "10.0.0.1:1")
				}, "alice", "10.0.0.9:1", true},
				{"the account limit ignores letter case", func() {}, "ALICE", "10.0.0.9:1", true},
				{"another account from a fresh address passes", func() {}, "bob", "10.0.0.2:1", false},
				{"the address is held past its limit over any accounts", func() {
					for i := range 5 {
						attempt(fmt.Sprintf("u%d", i), "10.0.0.4:2")
					}
				}, "carol", "10.0.0.4:3", true},
				{"a success clears the account", func() {
					th.Succeeded(ctx, "alice", from("10.0.0.9:1"))
				}, "alice", "10.0.0.3:1", false},
				{"a success does not clear the address", func() {
					th.Succeeded(ctx, "u0", from("10.0.0.4:2"))
				}, "dave", "10.0.0.4:2", true},
				{"the address stays held for any account", func() {}, "alice", "10.0.0.4:2", true},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					tc.run()
					wait := attempt(tc.user, tc.addr)
					if (wait > 0) != tc.blocked {
						t.Fatalf("wait %v, want blocked=%v", wait, tc.blocked)
					}
					if tc.blocked && (wait > time.Minute || wait < time.Second) {
						t.Fatalf("wait %v is not within the window", wait)
					}
				})
			}
			if w, _ := th.Scoped("redeem").Attempt(ctx, "alice", from("10.9.9.9:1")); w != 0 {
				t.Fatalf("a scope of its own must not see sign-in's count: wait %v", w)
			}
		})
	}
}

// A burst of parallel attempts for one account from several addresses lets
// exactly the limit through: the count is taken before the secret is
// checked, in one atomic step.
func TestThrottleLetsOnlyTheLimitThroughAParallelBurst(t *testing.T) {
	limits := ThrottleLimits{Window: time.Minute, PerAccount: 10, PerAddress: 1000}
	for name, c := range counters(t) {
		t.Run(name, func(t *testing.T) {
			th := NewLoginThrottle(c, limits)
			var passed atomic.Int64
			var wg sync.WaitGroup
			for i := range 150 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					wait, err := th.Attempt(context.Background(), "victim", from(fmt.Sprintf("10.1.0.%d:1", i%5)))
					if err != nil {
						t.Error(err)
					}
					if wait == 0 {
						passed.Add(1)
					}
				}()
			}
			wg.Wait()
			if n := passed.Load(); n != limits.PerAccount {
				t.Fatalf("%d of 150 parallel attempts were let through, want exactly %d", n, limits.PerAccount)
			}
		})
	}
}

func TestAddressBucketGroupsIPv6ByItsSlash64(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"[2001:db8:1:2::1]:5", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:6", true},
		{"[2001:db8:1:2::1]:5", "[2001:db8:1:3::1]:5", false},
		{"10.0.0.1:1", "10.0.0.1:2", true},
		{"10.0.0.1:1", "10.0.0.2:1", false},
		{"[::ffff:10.0.0.1]:1", "10.0.0.1:9", true},
		{"[fe80::1%eth0]:1", "[fe80::2%eth1]:1", true},
	}
	for _, tc := range cases {
		a, b := AddressBucket(from(tc.a)), AddressBucket(from(tc.b))
		if (a == b) != tc.same {
			t.Errorf("%s → %q, %s → %q; same bucket = %v, want %v", tc.a, a, tc.b, b, a == b, tc.same)
		}
	}
	limits := ThrottleLimits{Window: time.Minute, PerAccount: 100, PerAddress: 3}
	th := NewLoginThrottle(NewMemoryCounter(), limits)
	for i := range 3 {
		th.Attempt(context.Background(), fmt.Sprintf("new%d", i), from(fmt.Sprintf("[2001:db8::%x]:1", i+1)))
	}
	if w, _ := th.Attempt(context.Background(), "new9", from("[2001:db8::abcd]:1")); w == 0 {
		t.Fatal("rotating through one /64 must not reset the address budget")
	}
}

func TestMemoryCounterWindowEnds(t *testing.T) {
	c := NewMemoryCounter()
	now := time.Now()
	c.now = func() time.Time { return now }
	ctx := context.Background()
	c.Incr(ctx, "k", time.Minute)
	if n, _, _ := c.Incr(ctx, "k", time.Minute); n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
	c.Decr(ctx, "k")
	if n, _, _ := c.Incr(ctx, "k", time.Minute); n != 2 {
		t.Fatalf("count after one taken back %d, want 2", n)
	}
	now = now.Add(time.Minute)
	if n, _, _ := c.Incr(ctx, "k", time.Minute); n != 1 {
		t.Fatalf("count after the window %d, want 1", n)
	}
	c.Reset(ctx, "k")
	c.Decr(ctx, "k")
	if n, _, _ := c.Incr(ctx, "k", time.Minute); n != 1 {
		t.Fatalf("taking back from nothing must not go below zero: %d", n)
	}
}

// from is a sign-in request arriving from addr.
func from(addr string) *http.Request {
	r := httptest.NewRequest("POST", "/api/auth/login", nil)
	r.RemoteAddr = addr
	return r
}
