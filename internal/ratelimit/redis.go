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
	// books say whether a late record's row is stored (budgetreload.go).
	books BudgetBooks
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
	// A refusal answers the checks up to the one refused; an admission
	// answers them all.
	read := len(checks)
	if len(res) > 0 && res[0] > 0 {
		read = int(res[0])
	}
	if len(res) < 1 || read > len(checks) || len(res) < 1+2*read {
		return 0, errors.New("ratelimit: unexpected answer from the Redis script")
	}
	for i := range checks {
		out[i] = reading{}
		if i < read {
			out[i] = reading{curr: res[1+2*i], prev: res[2+2*i]}
		}
	}
	return int(res[0]) - 1, nil
}

func (b *redisBackend) adjust(ctx context.Context, key ckey, minute, delta int64) error {
	return adjustScript.Run(ctx, b.rdb, []string{b.minuteKey(key, minute)}, delta).Err()
}

func (b *redisBackend) release(ctx context.Context, key ckey, lease string) error {
	return b.rdb.ZRem(ctx, b.prefix+key.String(), lease).Err()
}

// budgetScript: KEYS the period counters of every level that applies,
// then, when the share is journaled, the owner's journal and the set of
// owners; ARGV[1] the amount, ARGV[2] how many counters, ARGV[2+i] the
// limit of KEYS[i], then the journal's hold key, owner and record. It
// takes the amount from every counter or from none, atomic since Redis
// runs a script alone, so concurrent calls on any node cannot together
// overrun any level; a share taken is journaled in the same step (see
// budgetjournal.go). Returns {state, index, used}: state -1 when KEYS[index]
// is not loaded yet, 0 refused at index (used is its spending), 1 taken
// (used is the first counter's spending after the take).
var budgetScript = redis.NewScript(`
local amount = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local vals = {}
for i = 1, n do
  local v = redis.call('GET', KEYS[i])
  if not v then return {-1, i, 0} end
  vals[i] = tonumber(v)
end
if amount > 0 then
  for i = 1, n do
    if vals[i] + amount > tonumber(ARGV[2 + i]) then return {0, i, vals[i]} end
  end
  for i = 1, n do
    vals[i] = redis.call('INCRBY', KEYS[i], amount)
  end
  if #KEYS > n then
    redis.call('HSET', KEYS[n + 1], ARGV[n + 3], ARGV[n + 5])
    redis.call('SADD', KEYS[n + 2], ARGV[n + 4])
  end
end
return {1, 0, vals[1]}
`)

func (b *redisBackend) budgetTake(ctx context.Context, takes []budgetTake, amount int64, load func(context.Context, *budgetTake) (int64, error), jr *journalTag) (int, int64, error) {
	var kb [maxBudgets + 2]string
	var ab [5 + maxBudgets]any
	keys, args := kb[:0], append(ab[:0], amount, len(takes))
	for i := range takes {
		keys = append(keys, b.prefix+takes[i].key)
		args = append(args, takes[i].limit)
	}
	if jr != nil && amount > 0 {
		keys = append(keys, b.budgetJournalKey(jr.owner), b.budgetOwnersKey())
		args = append(args, jr.hold, jr.owner, budgetRecord(amount, takes))
	}
	// Each round loads one missing counter, so len(takes)+1 rounds see
	// every counter loaded; only the first call of a period pays them.
	for range len(takes) + 1 {
		res, err := budgetScript.Run(ctx, b.rdb, keys, args...).Int64Slice()
		if err != nil {
			return 0, 0, err
		}
		if len(res) != 3 {
			return 0, 0, errors.New("ratelimit: unexpected answer from the Redis budget script")
		}
		switch res[0] {
		case 1:
			return -1, res[2], nil
		case 0:
			return int(res[1]) - 1, res[2], nil
		}
		// The first node to load the period wins; later ones count on it.
		if err := b.loadCounter(ctx, keys[res[1]-1], &takes[res[1]-1], load); err != nil {
			return 0, 0, err
		}
	}
	return 0, 0, errors.New("ratelimit: the period counters could not be loaded into Redis")
}

func (b *redisBackend) budgetAdd(ctx context.Context, key string, delta int64) (int64, error) {
	return adjustScript.Run(ctx, b.rdb, []string{b.prefix + key}, delta).Int64()
}
