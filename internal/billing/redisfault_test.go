package billing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/testkit/redisproc"
)

// quietRedisLog keeps go-redis's dial failures, expected by these tests
// by the hundred, out of the test output.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietRedisLog{}) }

// ownRedis is the test's own redis-server, with what these tests do to it.
type ownRedis struct {
	*redisproc.Server
	t *testing.T
}

func startOwnRedis(t *testing.T) *ownRedis {
	return &ownRedis{Server: redisproc.Start(t), t: t}
}

func (r *ownRedis) addr() string { return r.Addr() }
func (r *ownRedis) start()       { r.Restart() }
func (r *ownRedis) kill()        { r.Kill() }

func (r *ownRedis) flushAll() {
	c := redis.NewClient(&redis.Options{Addr: r.addr()})
	defer c.Close()
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		r.t.Fatal(err)
	}
}

// client is configured as the gateway configures its own (fail fast,
// reconnect fast).
func (r *ownRedis) client() redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: r.addr(), DialTimeout: time.Second, ReadTimeout: time.Second,
		WriteTimeout: time.Second, MaxRetries: 1, DialerRetries: 1})
	r.t.Cleanup(func() { c.Close() })
	return c
}

// faultNode is one gateway node's billing over shared Redis and database.
type faultNode struct {
	svc *Service
	w   *Writer
}

func newFaultNode(t *testing.T, ctx context.Context, st store.Store, rr *ownRedis) *faultNode {
	t.Helper()
	w := NewWriter(st, quietLog(), 20*time.Millisecond, 256)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	svc := NewService(NewRedisBalances(rr.client(), st), w, 500000)
	if err := svc.TakeLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	go svc.RunLeases(ctx, time.Minute)
	return &faultNode{svc: svc, w: w}
}

type faultAccount struct {
	user, token    int64
	initU, initT   int64
	spentU, spentT int64 // Σ consume rows, filled by books
}

func seedFaultAccounts(t *testing.T, userQuotas []int64, tokenQuota int64) (store.Store, []*faultAccount) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var out []*faultAccount
	for i, userQuota := range userQuotas {
		u := &store.User{Username: fmt.Sprintf("u%d", i), Role: store.RoleUser, Group: "default", Quota: userQuota}
		if err := st.Users().Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		tk := &store.Token{UserID: u.ID, Name: "k", KeyHash: fmt.Sprintf("h%d", i), Quota: tokenQuota}
		if err := st.Tokens().Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
		out = append(out, &faultAccount{user: u.ID, token: tk.ID, initU: userQuota, initT: tokenQuota})
	}
	return st, out
}

// checkBooks asserts, once every node has written its queue and the live
// balances settled, that for every user and key initial − current equals
// the sum of the consume rows, and that every node sees the database's
// balance; it returns the lowest user balance.
func checkBooks(t *testing.T, st store.Store, nodes []*faultNode, accts []*faultAccount) int64 {
	t.Helper()
	ctx := context.Background()
	lowest := int64(1 << 62)
	var last string
	deadline := time.Now().Add(5 * time.Second)
	for {
		last = ""
		for _, n := range nodes {
			if err := n.w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		byUser, byToken := consumed(t, st)
		for _, a := range accts {
			u, _ := st.Users().Get(ctx, a.user)
			tk, _ := st.Tokens().Get(ctx, a.token)
			if a.initU-u.Quota != byUser[a.user] || a.initT-tk.Quota != byToken[a.token] {
				t.Fatalf("user %d: initial %d − current %d ≠ Σ rows %d (key: %d − %d ≠ %d)",
					a.user, a.initU, u.Quota, byUser[a.user], a.initT, tk.Quota, byToken[a.token])
			}
			lowest = min(lowest, u.Quota)
			for i, n := range nodes {
				lu, err1 := n.svc.Balances().User(ctx, a.user)
				lt, _, err2 := n.svc.Balances().Token(ctx, a.token)
				if err1 != nil || err2 != nil || lu != u.Quota || lt != tk.Quota {
					last = fmt.Sprintf("node %d: live user %d key %d (%v %v), ledger %d and %d", i, lu, lt, err1, err2, u.Quota, tk.Quota)
				}
			}
		}
		if last == "" {
			return lowest
		}
		if time.Now().After(deadline) {
			t.Fatal(last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// consumed sums the consume rows by user and by key.
func consumed(t *testing.T, st store.Store) (byUser, byToken map[int64]int64) {
	t.Helper()
	byUser, byToken = map[int64]int64{}, map[int64]int64{}
	for page := 1; ; page++ {
		rows, _, err := st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{Page: page, PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			byUser[r.UserID] += r.Quota
			byToken[r.TokenID] += r.Quota
		}
		if len(rows) < 1000 {
			return byUser, byToken
		}
	}
}

// A Redis outage refuses money moves with a 503 redis_unavailable (never
// a plain error, which clients would see as a 500), a settle made during
// it is still charged, and once Redis is back (empty) calls are admitted
// again within a second, against balances equal to the ledger.
func TestRedisOutageRefusesWith503AndRecoversOnTheLedger(t *testing.T) {
	rr := startOwnRedis(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, accts := seedFaultAccounts(t, []int64{100000}, 50000)
	a := accts[0]
	n := newFaultNode(t, ctx, st, rr)
	acct := Account{UserID: a.user, TokenID: a.token}
	h, err := n.svc.Reserve(ctx, acct, "before", 100)
	if err != nil {
		t.Fatal(err)
	}
	rr.kill()
	_, err = n.svc.Reserve(ctx, acct, "during", 100)
	var ie *ir.Error
	if !errors.As(err, &ie) || ie.Status != 503 || ie.Code != "redis_unavailable" {
		t.Fatalf("reserve during the outage: %v, want a 503 redis_unavailable", err)
	}
	if _, err := n.svc.Credit(ctx, Credit{UserID: a.user, Delta: 5, Note: "x"}); !errors.As(err, &ie) || ie.Status != 503 {
		t.Fatalf("top-up during the outage: %v, want a 503", err)
	}
	// The call answered before the outage is charged all the same.
	h.Settle(ctx, 70, store.UsageLog{UserID: a.user, TokenID: a.token, Model: "m"})
	rr.start()
	back := time.Now()
	for {
		h2, err := n.svc.Reserve(ctx, acct, fmt.Sprintf("after-%d", time.Now().UnixNano()), 100)
		if err == nil {
			h2.Settle(ctx, 30, store.UsageLog{UserID: a.user, TokenID: a.token, Model: "m"})
			break
		}
		if !errors.As(err, &ie) || ie.Status != 503 {
			t.Fatalf("reserve after the outage: %v", err)
		}
		if time.Since(back) > time.Second {
			t.Fatalf("not admitting %v after Redis came back: %v", time.Since(back), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("admitting again %v after Redis came back", time.Since(back))
	checkBooks(t, st, []*faultNode{n}, accts)
}

// Two nodes under load while Redis loses everything (a FLUSHALL, then a
// kill and a restart without persistence): holds reserved before a loss
// and settled after it are counted once, no balance is admitted against
// before it was rebuilt from the ledger, and afterwards every user's and
// key's initial − current equals its consume rows exactly, on both nodes
// alike. Users run out of credit on the way: nobody ends below −(one
// call's reservation × nodes).
func TestRedisLosingItsDataUnderLoadKeepsTheBooksExact(t *testing.T) {
	for _, fault := range []struct {
		name string
		do   func(*ownRedis)
	}{
		{"flushall", func(r *ownRedis) { r.flushAll() }},
		{"restart-empty", func(r *ownRedis) { r.kill(); time.Sleep(200 * time.Millisecond); r.start() }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			rr := startOwnRedis(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const reserve = 100
			// Users 0–1 have credit for about 40 calls each (a call costs 50 on
			// average); 2–3 plenty.
			st, accts := seedFaultAccounts(t, []int64{2000, 2000, 1 << 30, 1 << 30}, 1<<40)
			nodes := []*faultNode{newFaultNode(t, ctx, st, rr), newFaultNode(t, ctx, st, rr)}
			var stop atomic.Bool
			var wg sync.WaitGroup
			var served, refused, unavailable atomic.Int64
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n, a := nodes[g%2], accts[g%4]
					acct := Account{UserID: a.user, TokenID: a.token}
					for i := 0; !stop.Load(); i++ {
						h, err := n.svc.Reserve(ctx, acct, fmt.Sprintf("g%d-%d", g, i), reserve)
						var ie *ir.Error
						switch {
						case err == nil:
						case errors.As(err, &ie) && ie.Status == 402:
							refused.Add(1)
							time.Sleep(time.Millisecond)
							continue
						case errors.As(err, &ie) && ie.Status == 503:
							unavailable.Add(1)
							time.Sleep(5 * time.Millisecond)
							continue
						default:
							t.Errorf("reserve: %v", err)
							return
						}
						time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond) // the call runs
						if i%7 == 0 {
							h.Refund(ctx, nil)
							continue
						}
						h.Settle(ctx, int64(1+rand.IntN(reserve)), store.UsageLog{UserID: a.user, TokenID: a.token, Model: "m"})
						served.Add(1)
					}
				}()
			}
			time.Sleep(300 * time.Millisecond)
			fault.do(rr)
			time.Sleep(400 * time.Millisecond)
			fault.do(rr)
			// Run on until the users with little credit ran out (slow
			// machines, -race), so the overspend bound is exercised.
			for end := time.Now().Add(10 * time.Second); refused.Load() == 0 && time.Now().Before(end); {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			stop.Store(true)
			wg.Wait()
			lowest := checkBooks(t, st, nodes, accts)
			t.Logf("served %d, refused for quota %d, 503 while rebuilding %d; lowest balance %d",
				served.Load(), refused.Load(), unavailable.Load(), lowest)
			if lowest < -reserve*int64(len(nodes)) {
				t.Fatalf("a user ended at %d, below −(reservation × nodes)", lowest)
			}
			if refused.Load() == 0 {
				t.Fatal("no user ran out of credit: the overspend bound was not exercised")
			}
		})
	}
}

// A node that just started (it has not adopted the epoch in force yet)
// sweeps a dead node's holds: the release it writes moves the live
// balances already loaded, instead of being dropped as stale.
func TestAFreshNodesSweepMovesBalancesLoadedBeforeIt(t *testing.T) {
	rr := startOwnRedis(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, accts := seedFaultAccounts(t, []int64{1000}, 500)
	a := accts[0]
	dead := newFaultNode(t, ctx, st, rr)
	if _, err := dead.svc.Reserve(ctx, Account{UserID: a.user, TokenID: a.token}, "in-flight", 300); err != nil {
		t.Fatal(err)
	}
	if err := dead.w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dead.svc.TakeLease(ctx, -time.Second); err != nil {
		t.Fatal(err)
	}
	w := NewWriter(st, quietLog(), 20*time.Millisecond, 256)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	fresh := NewService(NewRedisBalances(rr.client(), st), w, 500000)
	if err := fresh.TakeLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n, err := fresh.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep released %d (%v), want the dead node's hold", n, err)
	}
	for _, n := range []*Service{fresh, dead.svc} {
		if u, err := n.Balances().User(ctx, a.user); err != nil || u != 1000 {
			t.Fatalf("live user balance %d (%v) after the release, want 1000", u, err)
		}
	}
}
