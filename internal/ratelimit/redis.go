package ratelimit

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisBackend keeps the counts in Redis so that every node enforces one
// limit together. Each admission is one script run: it reads every check's
// two minute counters (or the concurrency gauge), refuses without changing
// anything when one does not fit, and otherwise counts them all — atomic,
// since Redis runs a script alone.
type redisBackend struct {
	rdb    redis.UniversalClient
	prefix string
}

func newRedisBackend(rdb redis.UniversalClient) *redisBackend {
	prefix := "turnpike:rl:"
	if _, ok := rdb.(*redis.ClusterClient); ok {
		prefix = "{turnpike}:rl:" // one slot for every key of a script
	}
	return &redisBackend{rdb: rdb, prefix: prefix}
}

// acquireScript: KEYS are pairs (current minute, previous minute) per check
// (a gauge passes its key twice); ARGV[1] the elapsed fraction of the
// minute, ARGV[2] now in ms, ARGV[3] the lease's member id, ARGV[4] how
// long a concurrency slot may live in ms, then per check: kind ("w" window,
// "g" gauge), limit, cost. It returns {failed index or 0, curr1, prev1,
// curr2, prev2, …}. A gauge is a sorted set of leases scored by their
// expiry, so a slot held by a node that died frees itself.
var acquireScript = redis.NewScript(`
local frac = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local n = #KEYS / 2
local out = {0}
for i = 1, n do
  local kind = ARGV[3*i + 2]
  local limit = tonumber(ARGV[3*i + 3])
  local cost = tonumber(ARGV[3*i + 4])
  local curr, prev, ok = 0, 0, false
  if kind == 'g' then
    redis.call('ZREMRANGEBYSCORE', KEYS[2*i - 1], '-inf', now)
    curr = redis.call('ZCARD', KEYS[2*i - 1])
    ok = curr + cost <= limit
  else
    curr = tonumber(redis.call('GET', KEYS[2*i - 1]) or '0')
    prev = tonumber(redis.call('GET', KEYS[2*i]) or '0')
    ok = prev * (1 - frac) + curr + cost <= limit + 1e-9
  end
  out[2*i] = curr
  out[2*i + 1] = prev
  if not ok then
    out[1] = i
    return out
  end
end
local ttl = tonumber(ARGV[4])
for i = 1, n do
  if ARGV[3*i + 2] == 'g' then
    redis.call('ZADD', KEYS[2*i - 1], now + ttl, ARGV[3])
    redis.call('PEXPIRE', KEYS[2*i - 1], ttl)
  else
    redis.call('INCRBY', KEYS[2*i - 1], tonumber(ARGV[3*i + 4]))
    redis.call('EXPIRE', KEYS[2*i - 1], 180)
  end
end
return out
`)

// slotLifetime bounds how long a concurrency slot counts in Redis when its
// release never comes (the node died): longer than any call or realtime
// session should last.
const slotLifetime = time.Hour

// adjustScript: KEYS[1] a counter; ARGV[1] a delta. A counter that expired
// is left alone; none goes below zero.
var adjustScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if v < 0 then redis.call('SET', KEYS[1], 0, 'KEEPTTL') return 0 end
return v
`)

func (b *redisBackend) minuteKey(key ckey, m int64) string {
	return b.prefix + key.String() + ":" + strconv.FormatInt(m, 10)
}

func (b *redisBackend) acquire(ctx context.Context, now time.Time, checks []check, out []reading, lease string) (int, error) {
	m, frac := minuteOf(now)
	keys := make([]string, 0, 2*len(checks))
	args := make([]any, 0, 4+3*len(checks))
	// Slots expire by the real clock: a test's clock must not free them.
	args = append(args, strconv.FormatFloat(frac, 'f', 6, 64), time.Now().UnixMilli(), lease, slotLifetime.Milliseconds())
	for _, c := range checks {
		if c.gauge {
			k := b.prefix + c.key.String()
			keys = append(keys, k, k)
			args = append(args, "g", c.limit, c.cost)
			continue
		}
		keys = append(keys, b.minuteKey(c.key, m), b.minuteKey(c.key, m-1))
		args = append(args, "w", c.limit, c.cost)
	}
	res, err := acquireScript.Run(ctx, b.rdb, keys, args...).Int64Slice()
	if err != nil {
		return 0, err
	}
	if len(res) != 1+2*len(checks) {
		return 0, errors.New("ratelimit: unexpected answer from the Redis script")
	}
	for i := range checks {
		out[i] = reading{curr: res[1+2*i], prev: res[2+2*i]}
	}
	return int(res[0]) - 1, nil
}

func (b *redisBackend) adjust(ctx context.Context, key ckey, minute, delta int64) error {
	return adjustScript.Run(ctx, b.rdb, []string{b.minuteKey(key, minute)}, delta).Err()
}

func (b *redisBackend) release(ctx context.Context, key ckey, lease string) error {
	return b.rdb.ZRem(ctx, b.prefix+key.String(), lease).Err()
}

// budgetScript: KEYS[1] the period's counter; ARGV limit, amount. Returns
// {state, used}: state -1 when the counter is not loaded yet, 0 refused,
// 1 taken.
var budgetScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return {-1, 0} end
v = tonumber(v)
local amount = tonumber(ARGV[2])
if amount > 0 and v + amount > tonumber(ARGV[1]) then return {0, v} end
if amount == 0 then return {1, v} end
return {1, redis.call('INCRBY', KEYS[1], amount)}
`)

func (b *redisBackend) budgetTake(ctx context.Context, key string, limit, amount int64, expire time.Time, load func(context.Context) (int64, error)) (int64, bool, error) {
	k := b.prefix + key
	for range 3 {
		res, err := budgetScript.Run(ctx, b.rdb, []string{k}, limit, amount).Int64Slice()
		if err != nil {
			return 0, false, err
		}
		if res[0] >= 0 {
			return res[1], res[0] == 1, nil
		}
		used, err := load(ctx)
		if err != nil {
			return 0, false, &storeErr{err}
		}
		// The first node to load the period wins; later ones count on it.
		// expire may come from a test's clock; a day of slack keeps the
		// counter past its period either way, and a period's key is never
		// read after the period.
		ttl := max(time.Until(expire)+24*time.Hour, time.Hour)
		if err := b.rdb.SetNX(ctx, k, used, ttl).Err(); err != nil {
			return 0, false, err
		}
	}
	return 0, false, errors.New("ratelimit: the period counter could not be loaded into Redis")
}

func (b *redisBackend) budgetAdd(ctx context.Context, key string, delta int64) (int64, error) {
	return adjustScript.Run(ctx, b.rdb, []string{b.prefix + key}, delta).Int64()
}
