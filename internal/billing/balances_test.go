package billing

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

func seedAccounts(t *testing.T, userQuota, tokenQuota int64) (store.Store, int64, int64, int64) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	u := &store.User{Username: "u", Role: store.RoleUser, Group: "default", Quota: userQuota}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	limited := &store.Token{UserID: u.ID, Name: "limited", KeyHash: "h1", Quota: tokenQuota}
	unlimited := &store.Token{UserID: u.ID, Name: "unlimited", KeyHash: "h2", Quota: -1}
	for _, tk := range []*store.Token{limited, unlimited} {
		if err := st.Tokens().Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	return st, u.ID, limited.ID, unlimited.ID
}

type balancesFactory struct {
	name string
	make func(t *testing.T, st store.Store) Balances
}

func factories(t *testing.T) []balancesFactory {
	fs := []balancesFactory{{"memory", func(t *testing.T, st store.Store) Balances { return NewMemoryBalances(st) }}}
	addr := os.Getenv("TURNPIKE_TEST_REDIS")
	if addr == "" {
		t.Log("set TURNPIKE_TEST_REDIS (redis://127.0.0.1:6379/0) to run the Redis balance tests")
		return fs
	}
	opts, err := redis.ParseURL(addr)
	if err != nil {
		t.Fatal(err)
	}
	return append(fs, balancesFactory{"redis", func(t *testing.T, st store.Store) Balances {
		rdb := redis.NewClient(opts)
		if err := rdb.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("TURNPIKE_TEST_REDIS is set but Redis does not answer: %v", err)
		}
		b := &redisBalances{rdb: rdb, st: st, prefix: "turnpike:test:" + t.Name() + ":"}
		t.Cleanup(func() {
			keys, _ := rdb.Keys(context.Background(), b.prefix+"*").Result()
			if len(keys) > 0 {
				rdb.Del(context.Background(), keys...)
			}
			rdb.Close()
		})
		return b
	}})
}

func TestBalancesTakeBothOrNeither(t *testing.T) {
	for _, f := range factories(t) {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			st, uid, limited, unlimited := seedAccounts(t, 1000, 100)
			b := f.make(t, st)
			if err := b.Take(ctx, User(uid), limited, 150, false); err != ErrInsufficientToken {
				t.Fatalf("over the key's quota: %v", err)
			}
			if err := b.Take(ctx, User(uid), unlimited, 1500, false); err != ErrInsufficientUser {
				t.Fatalf("over the user's quota: %v", err)
			}
			if v, _ := b.User(ctx, uid); v != 1000 {
				t.Fatalf("a refused take moved the user balance to %d", v)
			}
			if err := b.Take(ctx, User(uid), limited, 60, false); err != nil {
				t.Fatal(err)
			}
			if err := b.Take(ctx, User(uid), limited, 60, true); err != nil {
				t.Fatalf("forced take: %v", err)
			}
			u, _ := b.User(ctx, uid)
			tk, lim, _ := b.Token(ctx, limited)
			if u != 880 || tk != -20 || !lim {
				t.Fatalf("user %d token %d limited %v", u, tk, lim)
			}
			if _, lim, _ := b.Token(ctx, unlimited); lim {
				t.Fatal("unlimited key reported as limited")
			}
			if err := b.Give(ctx, User(uid), limited, 20); err != nil {
				t.Fatal(err)
			}
			if tk, _, _ := b.Token(ctx, limited); tk != 0 {
				t.Fatalf("token after give %d", tk)
			}
		})
	}
}

func TestBalancesNeverOversellUnderConcurrency(t *testing.T) {
	for _, f := range factories(t) {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			st, uid, limited, _ := seedAccounts(t, 1000, 700)
			b := f.make(t, st)
			var wg sync.WaitGroup
			var mu sync.Mutex
			granted := 0
			for i := 0; i < 100; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if b.Take(ctx, User(uid), limited, 10, false) == nil {
						mu.Lock()
						granted++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if granted != 70 {
				t.Fatalf("granted %d takes of 10 from a key with 700", granted)
			}
			if u, _ := b.User(ctx, uid); u != 300 {
				t.Fatalf("user balance %d", u)
			}
		})
	}
}

func TestAnOverdrawnKeyStaysLimitedWhenReloaded(t *testing.T) {
	for _, f := range factories(t) {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			st, uid, limited, _ := seedAccounts(t, 1000, 100)
			if err := st.Ledger().Apply(ctx, []store.LedgerEntry{{Key: "over", Kind: store.LedgerSettle, UserID: uid, TokenID: limited,
				Delta: -300, TokenDelta: -300, Used: 300}}); err != nil {
				t.Fatal(err)
			}
			b := f.make(t, st)
			if v, lim, err := b.Token(ctx, limited); err != nil || !lim || v != -200 {
				t.Fatalf("Token = %d, limited %v, %v; want -200 and limited", v, lim, err)
			}
			if err := b.Take(ctx, User(uid), limited, 1, false); err != ErrInsufficientToken {
				t.Fatalf("a take from an overdrawn key: %v", err)
			}
		})
	}
}
