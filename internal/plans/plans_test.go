package plans

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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

// env is a plan store with one plan of an hour's and a week's window,
// granted to user 7, and a clock the test moves.
type env struct {
	st    store.Store
	now   time.Time
	plan  store.Plan
	grant store.PlanGrant
	rdb   Redis
}

const user = 7

func newEnv(t testing.TB, withRedis bool) *env {
	return newEnvOn(t, sqlitetest.DSN(t), withRedis)
}

func newEnvOn(t testing.TB, dsn string, withRedis bool) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{st: st, now: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
	if withRedis {
		e.rdb = testRedis(t)
	}
	e.plan = store.Plan{Name: "coder", PriceUSD: 20, Period: "month", Priority: 1,
		Windows: []store.PlanWindow{{Hours: 1, Quota: 100}, {Days: 7, Quota: 250}}, Models: []string{"m1"}}
	if err := st.Plans().Create(ctx, &e.plan); err != nil {
		t.Fatal(err)
	}
	e.grant = store.PlanGrant{UserID: user, PlanID: e.plan.ID, Until: e.now.AddDate(0, 1, 0), Source: store.GrantAdmin}
	if err := st.Plans().AddGrant(ctx, &e.grant); err != nil {
		t.Fatal(err)
	}
	return e
}

// node is one gateway process's service over the shared store (and Redis).
func (e *env) node(t *testing.T) *Service {
	t.Helper()
	o := Options{Store: e.st.Plans(), Now: func() time.Time { return e.now }}
	if e.rdb != nil {
		o.Redis = e.rdb
	}
	s := New(o)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// testRedis is the Redis of TURNPIKE_TEST_REDIS with this run's keys
// under a prefix of their own; it skips when the variable is unset.
func testRedis(t testing.TB) Redis {
	addr := os.Getenv("TURNPIKE_TEST_REDIS")
	if addr == "" {
		t.Skip("set TURNPIKE_TEST_REDIS to run the Redis plan window tests")
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
	return rdb
}

// backends runs a test on the database path and, when Redis is there, on
// the Redis path.
// The database path runs on SQLite, and on PostgreSQL and MySQL when
// their test servers are set.
func backends(t *testing.T, run func(t *testing.T, e *env)) {
	t.Run("database", func(t *testing.T) { run(t, newEnv(t, false)) })
	t.Run("redis", func(t *testing.T) { run(t, newEnv(t, true)) })
	t.Run("postgres", func(t *testing.T) {
		base := os.Getenv("TURNPIKE_TEST_POSTGRES")
		if base == "" {
			t.Skip("TURNPIKE_TEST_POSTGRES not set")
		}
		run(t, newEnvOn(t, testdb.Postgres(t, base), false))
	})
	t.Run("mysql", func(t *testing.T) {
		base := os.Getenv("TURNPIKE_TEST_MYSQL")
		if base == "" {
			t.Skip("TURNPIKE_TEST_MYSQL not set")
		}
		run(t, newEnvOn(t, testdb.MySQL(t, base), false))
	})
}

// isolate gives a Redis run's grant keys of its own, so runs sharing the
// database number do not meet.
func (e *env) isolate(s *Service) {
	if b, ok := s.be.(*redisBackend); ok {
		r := make([]byte, 6)
		_, _ = rand.Read(r)
		b.prefix = "turnpike:plan-test:" + hex.EncodeToString(r) + ":"
	}
}

func (e *env) take(t *testing.T, s *Service, amount int64) (*Draw, error) {
	t.Helper()
	return s.Take(context.Background(), s.Covering(user, "default", "m1"), user, amount, "")
}

func TestAPlanCoversOnlyItsModelsGroupsAndHolders(t *testing.T) {
	e := newEnv(t, false)
	s := e.node(t)
	if len(s.Covering(user, "default", "m1")) != 1 {
		t.Fatal("the holder's covered model is not covered")
	}
	for _, c := range []struct {
		user         int64
		group, model string
	}{{user, "default", "m2"}, {8, "default", "m1"}} {
		if hs := s.Covering(c.user, c.group, c.model); len(hs) != 0 {
			t.Errorf("user %d, %s: covered by %d plans, want none", c.user, c.model, len(hs))
		}
	}
	e.now = e.grant.Until.Add(time.Second)
	if len(s.Covering(user, "default", "m1")) != 0 {
		t.Error("a grant past its until still covers calls")
	}
}

func TestWindowsRollWithTheClock(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.node(t)
		e.isolate(s)
		opened := e.now
		d, err := e.take(t, s, 60)
		if err != nil || d == nil {
			t.Fatalf("first draw: %v, %v", d, err)
		}
		d.Settle(ctx, 70)
		e.now = e.now.Add(20 * time.Minute)
		if d, err := e.take(t, s, 40); d != nil || err != nil {
			t.Fatalf("a draw past the hour's quota (70+40 > 100) was taken: %v, %v", d, err)
		}
		if err := e.st.Plans().SetOverflow(ctx, user, OverflowWait); err != nil {
			t.Fatal(err)
		}
		if err := s.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = e.take(t, s, 40)
		var spent *Spent
		if !errors.As(err, &spent) || spent.Window != 0 || spent.RetryAfter != 40*time.Minute {
			t.Fatalf("waiting user: %v, want window 0 spent with 40m to wait", err)
		}
		e.now = opened.Add(time.Hour) // the hour's window closes
		d, err = e.take(t, s, 40)
		if err != nil || d == nil {
			t.Fatalf("draw after the window closed: %v, %v", d, err)
		}
		d.Settle(ctx, 40)
		held, err := s.Usage(ctx, user)
		if err != nil || len(held) != 1 {
			t.Fatalf("usage: %v, %v", held, err)
		}
		w := held[0].Windows
		if w[0].Used != 40 || !w[0].ResetsAt.Equal(e.now.Add(time.Hour)) {
			t.Errorf("hour window = %d used, resets %v; want 40, %v (it reopened at the call)", w[0].Used, w[0].ResetsAt, e.now.Add(time.Hour))
		}
		if w[1].Used != 110 || !w[1].ResetsAt.Equal(opened.Add(7*24*time.Hour)) {
			t.Errorf("week window = %d used, resets %v; want 110, %v", w[1].Used, w[1].ResetsAt, opened.Add(7*24*time.Hour))
		}
	})
}

func TestARefundedDrawGivesEveryWindowBack(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.node(t)
		e.isolate(s)
		d, err := e.take(t, s, 90)
		if err != nil || d == nil {
			t.Fatal(d, err)
		}
		d.Refund(ctx)
		d.Refund(ctx) // once only
		d.Settle(ctx, 90)
		held, _ := s.Usage(ctx, user)
		if u := held[0].Windows; u[0].Used != 0 || u[1].Used != 0 {
			t.Errorf("after a refund the windows hold %d and %d, want 0", u[0].Used, u[1].Used)
		}
	})
}

// Calls on two nodes draw concurrently. A reservation is the most a call
// may cost, so calls settle at or below it, except one whose usage came
// out above its estimate by a correction. No window may end above its
// quota by more than that one call's correction, and each window holds
// exactly what the taken calls were charged.
func TestConcurrentDrawsOnTwoNodesNeverOverspendAWindow(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, b := e.node(t), e.node(t)
		e.isolate(a)
		if ba, ok := a.be.(*redisBackend); ok {
			b.be.(*redisBackend).prefix = ba.prefix
		}
		const calls, amount, correction = 40, 10, 7
		var mu sync.Mutex
		var charged, taken int64
		var wg sync.WaitGroup
		for i := 0; i < calls; i++ {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := s.Take(ctx, s.Covering(user, "default", "m1"), user, amount, "")
				if err != nil {
					t.Error(err)
					return
				}
				if d == nil {
					return
				}
				mu.Lock()
				taken++
				charge := int64(amount - i%4)
				if taken == 1 {
					charge = amount + correction
				}
				charged += charge
				mu.Unlock()
				d.Settle(ctx, charge)
			}()
		}
		wg.Wait()
		held, err := a.Usage(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		hour := held[0].Windows[0]
		if hour.Used != charged {
			t.Errorf("the window holds %d, the taken calls were charged %d", hour.Used, charged)
		}
		if hour.Used > hour.Quota+correction {
			t.Errorf("the window holds %d, over its quota %d by more than one call's correction", hour.Used, hour.Quota)
		}
		if taken < 9 || taken == calls {
			t.Errorf("%d of %d calls drew from a window of 100 at 10 each", taken, calls)
		}
	})
}

// failingBackend fails a test that reaches it: a call no plan covers must
// not touch Redis or the database.
type failingBackend struct{ t *testing.T }

func (f failingBackend) take(context.Context, int64, []store.PlanTake, int64, int64, *store.PlanDraw) (store.PlanTaken, error) {
	f.t.Error("a draw reached the windows")
	return store.PlanTaken{}, nil
}
func (f failingBackend) add(context.Context, int64, []int64, int64, store.PlanMark) error {
	f.t.Error("a correction reached the windows")
	return nil
}
func (f failingBackend) handOver(context.Context, store.PlanDraw) error {
	f.t.Error("a hand-over reached the journal")
	return nil
}
func (f failingBackend) owners(context.Context) ([]string, error) { return nil, nil }
func (f failingBackend) journal(context.Context, string) ([]store.PlanDraw, error) {
	return nil, nil
}
func (f failingBackend) undo(context.Context, store.PlanDraw) (bool, error) { return false, nil }
func (f failingBackend) forgetOwner(context.Context, string) error          { return nil }
func (f failingBackend) makeLate(context.Context, store.PlanDraw, time.Time) (bool, error) {
	return false, nil
}
func (f failingBackend) live(context.Context, int64, int) ([]store.PlanWindowState, error) {
	f.t.Error("a read reached the windows")
	return nil, nil
}

func TestWithoutGrantsACallCostsOneMapReadAndNoRoundTrip(t *testing.T) {
	s := New(Options{})
	s.be = failingBackend{t}
	allocs := testing.AllocsPerRun(1000, func() {
		if hs := s.Covering(user, "default", "m1"); hs != nil {
			t.Fatal("covered without a grant")
		}
	})
	if allocs != 0 {
		t.Errorf("the check allocates %v times per call", allocs)
	}
	if d := s.Restore(context.Background(), "task:1"); d != nil {
		t.Error("a restored ticket found a draw without any grant")
	}
}

func BenchmarkCoveringWithoutGrants(b *testing.B) {
	s := New(Options{})
	for b.Loop() {
		_ = s.Covering(user, "default", "m1")
	}
}
