package billing

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// preEpochTake is the take script of the releases before the epochs
// (before schema 131), which move a balance under "balance:u:ID".
var preEpochTake = redis.NewScript(`
local u = redis.call('GET', KEYS[1])
if not u then return -1 end
local amount = tonumber(ARGV[1])
if tonumber(u) < amount then return -3 end
redis.call('DECRBY', KEYS[1], amount)
return 0
`)

// epochAdd is the add script of the releases since the epochs, which
// move a balance under "balance:<epoch>:u:ID" only.
var epochAdd = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-5, 0} end
local v = redis.call('GET', KEYS[2])
if not v then return {0, 0} end
return {1, redis.call('INCRBY', KEYS[2], ARGV[2])}
`)

func legacyTestBalances(t *testing.T) *redisBalances {
	t.Helper()
	addr := os.Getenv("TURNPIKE_TEST_REDIS")
	if addr == "" {
		t.Skip("set TURNPIKE_TEST_REDIS to run the Redis balance tests")
	}
	opts, err := redis.ParseURL(addr)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	b := &redisBalances{rdb: rdb, prefix: "turnpike:test:" + t.Name() + ":"}
	b.epoch.Store(new(string))
	t.Cleanup(func() {
		keys, _ := rdb.Keys(context.Background(), b.prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
		rdb.Close()
	})
	return b
}

// During a rolling deploy a node of this release, one of a release before
// the epochs and one of a release since them move one user's balance on
// one Redis: each sees every move, whoever made it.
func TestOlderReleasesAndThisOneMoveOneLiveBalance(t *testing.T) {
	ctx := context.Background()
	st, uid, _, _ := seedAccounts(t, 1000, 100)
	b := legacyTestBalances(t)
	b.st = st
	if err := b.Take(ctx, User(uid), 0, 100, false); err != nil {
		t.Fatal(err)
	}
	keys := b.userKeys(b.cur(), uid)
	if res, err := preEpochTake.Run(ctx, b.rdb, []string{keys[1]}, 50).Int(); err != nil || res != 0 {
		t.Fatalf("the pre-epoch node's take: %d %v", res, err)
	}
	if v, _ := b.User(ctx, uid); v != 850 {
		t.Fatalf("this release sees %d after the pre-epoch node's take, want 850", v)
	}
	if _, err := epochAdd.Run(ctx, b.rdb, []string{b.epochKey(), keys[0]}, b.cur(), -30).Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := preEpochTake.Run(ctx, b.rdb, []string{keys[1]}, 20).Int(); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.User(ctx, uid); v != 800 {
		t.Fatalf("this release sees %d after both older nodes moved, want 800", v)
	}
	if err := b.Take(ctx, User(uid), 0, 900, false); err != ErrInsufficientUser {
		t.Fatalf("a take over the shared balance: %v", err)
	}
	for i, who := range []string{"a release since the epochs", "a release before them"} {
		if v, _ := b.rdb.Get(ctx, keys[i]).Int64(); v != 800 {
			t.Errorf("%s reads %d, want 800", who, v)
		}
	}
}

// An older node forgets a key's balance after an administrator set its
// quota (it deletes its own key): this release reads the database again.
func TestAnOlderNodeForgettingABalanceReloadsIt(t *testing.T) {
	ctx := context.Background()
	for i, who := range []string{"a release since the epochs", "a release before them"} {
		t.Run(who, func(t *testing.T) {
			st, uid, limited, _ := seedAccounts(t, 1000, 100)
			b := legacyTestBalances(t)
			b.st = st
			if err := b.Take(ctx, User(uid), limited, 60, false); err != nil {
				t.Fatal(err)
			}
			if err := st.Tokens().SetQuota(ctx, limited, 5000); err != nil {
				t.Fatal(err)
			}
			b.rdb.Del(ctx, b.tokenKeys(b.cur(), limited)[i])
			if v, _, _ := b.Token(ctx, limited); v != 5000 {
				t.Fatalf("after the older node forgot the balance this release reads %d, want the database's 5000", v)
			}
		})
	}
}
