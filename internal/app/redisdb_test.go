package app_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/kv"
)

// redisClaimTTL outlives any one test; a claim left by a killed test
// process frees itself.
const redisClaimTTL = 15 * time.Minute

// freshRedis gives the test a Redis database of its own (1–15 of the test
// server, emptied first): balances are keyed by user id, and ids restart in
// a fresh PostgreSQL schema. The database is claimed with a key in base's
// database, so two test processes on one server (two packages, two
// checkouts) never empty each other's; a pick at random alone collided.
// Pub/sub is server-wide, so other tests' change messages may reach these
// nodes; they only cause extra reloads.
func freshRedis(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	claims := openRedis(t, base)
	owner := fmt.Sprintf("%d:%d", os.Getpid(), rand.Int64())
	for _, n := range rand.Perm(15) {
		db := n + 1
		if "/"+strconv.Itoa(db) == u.Path {
			continue
		}
		key := "turnpike-test:redis-db-claim:" + strconv.Itoa(db)
		ok, err := claims.SetNX(ctx, key, owner, redisClaimTTL).Result()
		if err != nil {
			t.Fatalf("claim a test redis database: %v", err)
		}
		if !ok {
			continue
		}
		t.Cleanup(func() { releaseRedisClaim(claims, key, owner) })
		u.Path = "/" + strconv.Itoa(db)
		if err := openRedis(t, u.String()).FlushDB(ctx).Err(); err != nil {
			t.Fatalf("flush test redis: %v", err)
		}
		return u.String()
	}
	t.Fatal("every test Redis database 1–15 is claimed by another test")
	return ""
}

// releaseRedisClaim deletes the claim only while it is still this test's
// (after the TTL another test may hold it).
func releaseRedisClaim(c kv.Client, key, owner string) {
	const delIfOwner = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`
	c.Eval(context.Background(), delIfOwner, []string{key}, owner)
}
