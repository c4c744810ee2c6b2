package billing

import (
	"context"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// ownRedis is a redis-server this test started, so that it may flush and
// kill it without touching anyone else's data.
type ownRedis struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
}

// startOwnRedis starts an empty redis-server without persistence on a free
// port. Without the binary the test is skipped, except under CI, which has
// it.
func startOwnRedis(t *testing.T) *ownRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server is not installed but CI is set: %v", err)
		}
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := &ownRedis{t: t, addr: addr}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *ownRedis) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: r.addr})
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on %s did not start", r.addr)
		}
	}
}

// stop kills the server (SIGKILL: it keeps nothing).
func (r *ownRedis) stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

func (r *ownRedis) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: r.addr, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// faultNode is one gateway node's billing: its own Redis client, balances
// and writer, on the shared store.
type faultNode struct {
	bal *redisBalances
	w   *Writer
	svc *Service
}

func newFaultNode(t *testing.T, r *ownRedis, st store.Store) *faultNode {
	t.Helper()
	bal := newRedisBalances(r.client(t), st)
	bal.lg = quietLog()
	bal.ep.pause = 300 * time.Millisecond // 60 writer intervals
	w := NewWriter(st, quietLog(), 5*time.Millisecond, 256)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	svc := NewService(bal, w, 500000)
	if err := svc.TakeLease(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	return &faultNode{bal: bal, w: w, svc: svc}
}

// faultLoad runs reserve-then-settle calls on every node until stop closes,
// each settling at a cost around its reservation. It counts the calls
// admitted and the refusals that were not a clean 402 or 503.
type faultLoad struct {
	admitted, refused, bad atomic.Int64
	wg                     sync.WaitGroup
}

func (l *faultLoad) run(nodes []*faultNode, acct Account, workers int, stop <-chan struct{}) {
	for i := range workers {
		n := nodes[i%len(nodes)]
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			ctx := context.Background()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				h, err := n.svc.Reserve(ctx, acct, n.svc.NewRequestKey("fault"), 50)
				if err != nil {
					if s := irStatus(err); s == 402 || s == 503 {
						l.refused.Add(1)
					} else {
						l.bad.Add(1)
					}
					time.Sleep(time.Millisecond)
					continue
				}
				l.admitted.Add(1)
				h.Settle(ctx, int64(20+(i*7+k)%60), store.UsageLog{UserID: acct.UserID, TokenID: acct.TokenID, Model: "m"})
			}
		}()
	}
}

// consumed sums the quota of every consume row of the user and of the key.
func consumed(t *testing.T, st store.Store, userID, tokenID int64) (user, token int64) {
	t.Helper()
	for page := 1; ; page++ {
		rows, _, err := st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{Page: page, PageSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.UserID == userID {
				user += r.Quota
			}
			if r.TokenID == tokenID {
				token += r.Quota
			}
		}
		if len(rows) < 100 {
			return user, token
		}
	}
}

// checkBooks flushes every node and asserts, to the unit, that what the
// database took from the user and the key is what the usage rows charged,
// and that every node's live balances equal the database's.
func checkBooks(t *testing.T, st store.Store, nodes []*faultNode, acct Account, userQuota, tokenQuota int64) {
	t.Helper()
	ctx := context.Background()
	for _, n := range nodes {
		if err := n.w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	u, err := st.Users().Get(ctx, acct.UserID)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := st.Tokens().Get(ctx, acct.TokenID)
	if err != nil {
		t.Fatal(err)
	}
	cu, ct := consumed(t, st, acct.UserID, acct.TokenID)
	if userQuota-u.Quota != cu || tokenQuota-tk.Quota != ct {
		t.Fatalf("database took %d from the user and %d from the key; the usage rows charged %d and %d",
			userQuota-u.Quota, tokenQuota-tk.Quota, cu, ct)
	}
	for i, n := range nodes {
		lu, err := n.bal.User(ctx, acct.UserID)
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		lt, _, err := n.bal.Token(ctx, acct.TokenID)
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		if lu != u.Quota || lt != tk.Quota {
			t.Fatalf("node %d live user %d key %d; the ledger says %d and %d", i, lu, lt, u.Quota, tk.Quota)
		}
	}
}

// Redis loses everything (FLUSHALL) while two nodes reserve and settle
// calls, holds open across the flush. The live balances are rebuilt from
// the ledger: afterwards both nodes see exactly the database's balances,
// and the database took exactly what the usage rows charged.
func TestRedisFlushUnderLoadRebuildsLiveBalancesFromTheLedger(t *testing.T) {
	r := startOwnRedis(t)
	const userQuota, tokenQuota = 10_000_000, 5_000_000
	st, uid, limited, _ := seedAccounts(t, userQuota, tokenQuota)
	nodes := []*faultNode{newFaultNode(t, r, st), newFaultNode(t, r, st)}
	acct := Account{UserID: uid, TokenID: limited}
	var load faultLoad
	stop := make(chan struct{})
	load.run(nodes, acct, 8, stop)
	admin := r.client(t)
	for range 3 {
		time.Sleep(300 * time.Millisecond)
		if err := admin.FlushAll(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(600 * time.Millisecond)
	close(stop)
	load.wg.Wait()
	if load.bad.Load() != 0 {
		t.Fatalf("%d reservations failed with something other than 402/503", load.bad.Load())
	}
	if load.admitted.Load() == 0 {
		t.Fatal("no call was admitted")
	}
	checkBooks(t, st, nodes, acct, userQuota, tokenQuota)
}

// Redis is killed and comes back empty on the same port while calls run.
// Reservations during the outage are refused with a 503 redis_unavailable,
// never a 500; after it the live balances on every node equal the ledger.
func TestRedisKilledAndRestartedEmptyRefusesWith503AndRebuilds(t *testing.T) {
	r := startOwnRedis(t)
	const userQuota, tokenQuota = 10_000_000, 5_000_000
	st, uid, limited, _ := seedAccounts(t, userQuota, tokenQuota)
	nodes := []*faultNode{newFaultNode(t, r, st), newFaultNode(t, r, st)}
	acct := Account{UserID: uid, TokenID: limited}
	var load faultLoad
	stop := make(chan struct{})
	load.run(nodes, acct, 8, stop)
	time.Sleep(300 * time.Millisecond)
	r.stop()
	time.Sleep(300 * time.Millisecond)
	_, err := nodes[0].svc.Reserve(context.Background(), acct, "during-outage", 10)
	var ie *ir.Error
	if !asIR(err, &ie) || ie.Status != 503 || ie.Code != "redis_unavailable" {
		t.Fatalf("reserve during the outage: %v", err)
	}
	r.start()
	time.Sleep(800 * time.Millisecond)
	close(stop)
	load.wg.Wait()
	if load.bad.Load() != 0 {
		t.Fatalf("%d reservations failed with something other than 402/503", load.bad.Load())
	}
	for _, n := range nodes { // the lease loop's heal, without waiting a second for it
		if err := n.bal.Heal(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	checkBooks(t, st, nodes, acct, userQuota, tokenQuota)
}

// A user with room for a few calls spends across a flush from two nodes.
// However the flush falls, the user never ends below minus one call's
// reservation per node, and the books stay exact.
func TestOverspendAcrossAFlushStaysBounded(t *testing.T) {
	r := startOwnRedis(t)
	const reserve = 50
	const userQuota, tokenQuota = 20 * reserve, 1_000_000
	st, uid, limited, _ := seedAccounts(t, userQuota, tokenQuota)
	nodes := []*faultNode{newFaultNode(t, r, st), newFaultNode(t, r, st)}
	acct := Account{UserID: uid, TokenID: limited}
	var load faultLoad
	stop := make(chan struct{})
	load.run(nodes, acct, 6, stop)
	admin := r.client(t)
	time.Sleep(30 * time.Millisecond)
	if err := admin.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(900 * time.Millisecond)
	close(stop)
	load.wg.Wait()
	checkBooks(t, st, nodes, acct, userQuota, tokenQuota)
	u, _ := st.Users().Get(context.Background(), uid)
	if floor := -int64(reserve * len(nodes)); u.Quota < floor {
		t.Fatalf("user ended at %d, below %d", u.Quota, floor)
	}
	if load.bad.Load() != 0 {
		t.Fatalf("%d reservations failed with something other than 402/503", load.bad.Load())
	}
	t.Logf("admitted %d, refused %d, final balance %d", load.admitted.Load(), load.refused.Load(), u.Quota)
}

func asIR(err error, target **ir.Error) bool {
	e, ok := err.(*ir.Error)
	if ok {
		*target = e
	}
	return ok
}
