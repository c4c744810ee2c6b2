package billing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// A cluster of billing nodes on one database and one Redis, for the tests
// of what happens when a node is taken for dead while it runs.

// clusterBackends are the databases a cluster test runs on: SQLite
// always, PostgreSQL and MariaDB when their test servers are named.
func clusterBackends(t *testing.T) []struct {
	name string
	dsn  func(t *testing.T) string
} {
	return []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return sqlitetest.DSN(t) }},
		{"postgres", func(t *testing.T) string {
			base := os.Getenv("TURNPIKE_TEST_POSTGRES")
			if base == "" {
				t.Skip("TURNPIKE_TEST_POSTGRES not set")
			}
			return testdb.Postgres(t, base)
		}},
		{"mysql", func(t *testing.T) string {
			base := os.Getenv("TURNPIKE_TEST_MYSQL")
			if base == "" {
				t.Skip("TURNPIKE_TEST_MYSQL not set")
			}
			return testdb.MySQL(t, base)
		}},
	}
}

// cluster is the shared database and Redis, the accounts on them and the
// nodes started so far.
type cluster struct {
	t      *testing.T
	st     *sqlstore.Store
	rdb    redis.UniversalClient
	prefix string
	accts  []*faultAccount
	ctx    context.Context
	bg     sync.WaitGroup // the nodes' watchers and the test's loops
}

const clusterUserQuota, clusterTokenQuota = 10_000_000, 5_000_000

func newCluster(t *testing.T, dsn string, users int) *cluster {
	t.Helper()
	addr := os.Getenv("TURNPIKE_TEST_REDIS")
	if addr == "" {
		t.Skip("set TURNPIKE_TEST_REDIS to run the cluster tests")
	}
	opts, err := redis.ParseURL(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlstore.OpenStore(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rdb := redis.NewClient(opts)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	c := &cluster{t: t, st: st, rdb: rdb, prefix: "turnpike:test:cluster:" + hex.EncodeToString(b) + ":", ctx: ctx}
	t.Cleanup(func() {
		keys, _ := rdb.Keys(context.Background(), c.prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
		rdb.Close()
	})
	// Registered last, so it runs first: nothing of the nodes runs when
	// the writers close and the database and Redis go.
	t.Cleanup(func() { cancel(); c.bg.Wait() })
	for i := range users {
		c.accts = append(c.accts, c.seedAccount(i))
	}
	return c
}

func (c *cluster) seedAccount(i int) *faultAccount {
	ctx := context.Background()
	u := &store.User{Username: fmt.Sprintf("u%d", i), Role: store.RoleUser, Group: "default", Quota: clusterUserQuota}
	if err := c.st.Users().Create(ctx, u); err != nil {
		c.t.Fatal(err)
	}
	tk := &store.Token{UserID: u.ID, Name: "k", KeyHash: fmt.Sprintf("ck%d", i), Quota: clusterTokenQuota}
	if err := c.st.Tokens().Create(ctx, tk); err != nil {
		c.t.Fatal(err)
	}
	return &faultAccount{user: u.ID, token: tk.ID, initU: clusterUserQuota, initT: clusterTokenQuota}
}

// clusterNode is one gateway node's billing: its own balances object (as
// its own process would have) over the shared Redis keys.
type clusterNode struct {
	svc  *Service
	w    *Writer
	bal  *redisBalances
	stop context.CancelFunc // ends its epoch watcher: the process died
}

// node starts a node with a lease of a minute whose writer stores every
// interval (time.Hour: only when flushed) and whose epoch watcher runs.
func (c *cluster) node(interval time.Duration) *clusterNode {
	c.t.Helper()
	return c.nodeOn(c.st, interval)
}

// nodeOn is node writing through st (the cluster's store, wrapped).
func (c *cluster) nodeOn(st store.Store, interval time.Duration) *clusterNode {
	c.t.Helper()
	w := NewWriter(st, quietLog(), interval, 256)
	c.t.Cleanup(func() { _ = w.Close(context.Background()) })
	bal := &redisBalances{rdb: c.rdb, st: c.st, prefix: c.prefix}
	bal.epoch.Store(new(string))
	ctx, stop := context.WithCancel(c.ctx)
	n := &clusterNode{svc: NewService(bal, w, 500000), w: w, bal: bal, stop: stop}
	if err := n.svc.TakeLease(context.Background(), time.Minute); err != nil {
		c.t.Fatal(err)
	}
	// As the gateway says at its start: the nodes that must acknowledge a
	// new epoch are those that said they keep balances in Redis.
	if err := c.st.MarkNodeRedis(context.Background(), n.svc.Node(), true); err != nil {
		c.t.Fatal(err)
	}
	c.bg.Go(func() { n.svc.watchEpoch(ctx) })
	return n
}

// loop runs f until the test ends.
func (c *cluster) loop(f func(ctx context.Context)) {
	c.bg.Go(func() { f(c.ctx) })
}

// adopt has n take the epoch in force (or set the first one).
func (c *cluster) adopt(n *clusterNode) {
	c.t.Helper()
	if err := n.svc.resync(context.Background()); err != nil {
		c.t.Fatal(err)
	}
}

// reserve reserves amount on account i through n.
func (c *cluster) reserve(n *clusterNode, i int, key string, amount int64) *Hold {
	c.t.Helper()
	h, err := n.svc.Reserve(context.Background(), c.acct(i), key, amount)
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

func (c *cluster) acct(i int) Account {
	return Account{UserID: c.accts[i].user, TokenID: c.accts[i].token}
}

func (c *cluster) settle(h *Hold, charge int64) {
	a := h.Account()
	h.Settle(context.Background(), charge, store.UsageLog{UserID: a.UserID, TokenID: a.TokenID, Model: "m"})
}

func (c *cluster) flush(n *clusterNode) {
	c.t.Helper()
	if err := n.w.Flush(context.Background()); err != nil {
		c.t.Fatal(err)
	}
}

// lapse makes n's lease end, as a renewal that came too late leaves it.
func (c *cluster) lapse(n *clusterNode) {
	c.t.Helper()
	if err := n.svc.TakeLease(context.Background(), -time.Second); err != nil {
		c.t.Fatal(err)
	}
}

// renew is n's late renewal: its lease again, and the fence mark a sweep
// may have left it.
func (c *cluster) renew(n *clusterNode) {
	c.t.Helper()
	if err := n.svc.TakeLease(context.Background(), time.Minute); err != nil {
		c.t.Fatal(err)
	}
	n.svc.checkFence(context.Background())
}

// ledgerSums sums the ledger's moves of account a's user and key.
func (c *cluster) ledgerSums(a *faultAccount) (user, token int64) {
	c.t.Helper()
	for page := 1; ; page++ {
		entries, _, err := c.st.Ledger().List(context.Background(), a.user, store.Page{Page: page, PageSize: 1000})
		if err != nil {
			c.t.Fatal(err)
		}
		for _, e := range entries {
			user += e.Delta
			if e.TokenID == a.token {
				token += e.TokenDelta
			}
		}
		if len(entries) < 1000 {
			return user, token
		}
	}
}

// booksDiffer says how the books of account a disagree, "" when every
// node's live balance, the database's balance and the ledger's sum agree
// to the unit for its user and its key.
func (c *cluster) booksDiffer(a *faultAccount, nodes []*clusterNode) string {
	ctx := context.Background()
	u, err1 := c.st.Users().Get(ctx, a.user)
	tk, err2 := c.st.Tokens().Get(ctx, a.token)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("database: %v %v", err1, err2)
	}
	su, stk := c.ledgerSums(a)
	if a.initU+su != u.Quota || a.initT+stk != tk.Quota {
		return fmt.Sprintf("user %d: database user %d key %d, ledger says %d and %d", a.user, u.Quota, tk.Quota, a.initU+su, a.initT+stk)
	}
	for i, n := range nodes {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		lu, err1 := n.bal.User(rctx, a.user)
		lt, _, err2 := n.bal.Token(rctx, a.token)
		cancel()
		if err1 != nil || err2 != nil || lu != u.Quota || lt != tk.Quota {
			return fmt.Sprintf("user %d on node %d: live user %d key %d (%v %v), database and ledger %d and %d (live − database: %+d, %+d)",
				a.user, i, lu, lt, err1, err2, u.Quota, tk.Quota, lu-u.Quota, lt-tk.Quota)
		}
	}
	return ""
}

// checkCluster flushes every node and wants the books to agree for every
// account, giving the epoch watchers a moment to finish a rebuild.
func (c *cluster) checkCluster(nodes ...*clusterNode) {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, n := range nodes {
			c.flush(n)
		}
		var last string
		for _, a := range c.accts {
			if d := c.booksDiffer(a, nodes); d != "" {
				last = d
				break
			}
		}
		if last == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatal(last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
