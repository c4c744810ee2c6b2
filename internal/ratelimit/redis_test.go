package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// redisService is a Service counting in the Redis of TURNPIKE_TEST_REDIS,
// under ids no other run uses; it skips when the variable is unset.
func redisService(t testing.TB, now *time.Time) (*Service, int64) {
	addr := os.Getenv("TURNPIKE_TEST_REDIS")
	if addr == "" {
		t.Skip("set TURNPIKE_TEST_REDIS (redis://127.0.0.1:6379/0) to run the Redis limiter tests")
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
	s := New(&fakeRepo{spent: map[string]int64{}}, rdb, nil)
	s.SetClock(func() time.Time { return *now })
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id, _ := strconv.ParseInt(hex.EncodeToString(b), 16, 64)
	return s, id + 1_000_000
}

func TestRedisCountsTokensConcurrencyAndBudgetsLikeMemory(t *testing.T) {
	now := time.Now()
	s, id := redisService(t, &now)
	ctx := context.Background()
	sid := strconv.FormatInt(id, 10)
	set(t, s, store.SubjectToken, sid, Limits{Rate: Rate{TPM: 1000, Concurrency: 1}, PeriodQuota: 100, Period: Day})
	sub := Subject{TokenID: id}
	l, err := s.For(sub).Acquire(ctx, 900)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.For(sub).Acquire(ctx, 10); err == nil {
		t.Fatal("a second concurrent call was admitted")
	}
	l.Settle(ctx, 100)
	l.Release(ctx)
	if l, err = s.For(sub).Acquire(ctx, 800); err != nil {
		t.Fatalf("after correction and release: %v", err)
	}
	l.Release(ctx)
	h, err := s.For(sub).Hold(ctx, 90, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.For(sub).Hold(ctx, 20, ""); err == nil {
		t.Fatal("a hold past the budget was admitted")
	}
	h.Settle(ctx, 30)
	if st, err := s.Period(ctx, store.SubjectToken, id); err != nil || st.Used != 30 {
		t.Fatalf("period %+v %v", st, err)
	}
}

// Without Redis, rate limits admit the call uncounted (the limiter must not
// take the gateway down) while budgets, which are money, refuse it with a
// 503 redis_unavailable that every dialect renders — never a plain error,
// which a client would see as a 500.
func TestRedisAwayAdmitsUncountedButRefusesBudgetsWith503(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing answers there now
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	s := New(&fakeRepo{spent: map[string]int64{}}, rdb, nil)
	set(t, s, store.SubjectToken, "7", Limits{Rate: Rate{RPM: 1, Concurrency: 1}, PeriodQuota: 100, Period: Day})
	ctx := context.Background()
	sub := Subject{TokenID: 7}
	for range 3 { // over the RPM limit, were it counted
		lease, err := s.For(sub).Acquire(ctx, 10)
		if err != nil || lease != nil {
			t.Fatalf("acquire without Redis: lease %v, %v; want admitted uncounted", lease, err)
		}
	}
	_, err = s.For(sub).Hold(ctx, 10, "")
	var ie *ir.Error
	if !errors.As(err, &ie) || ie.Status != 503 || ie.Code != "redis_unavailable" {
		t.Fatalf("budget hold without Redis: %v; want a 503 redis_unavailable", err)
	}
}
