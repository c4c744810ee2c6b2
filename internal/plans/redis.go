package plans

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Redis is the client the windows live in when nodes share one.
type Redis = redis.UniversalClient

// redisBackend keeps each grant's windows in one hash (s<i> the start in
// Unix ms, u<i> the amount drawn, l: loaded), so a draw over every window
// of a plan is one script run. A hash that is missing (first use, expiry,
// or Redis lost it) is loaded from the usage rows, the windows' truth.
type redisBackend struct {
	rdb    Redis
	st     store.PlanRepo
	prefix string
}

func newRedisBackend(rdb Redis, st store.PlanRepo) *redisBackend {
	prefix := "turnpike:plan:"
	if _, ok := rdb.(*redis.ClusterClient); ok {
		prefix = "{turnpike}:plan:"
	}
	return &redisBackend{rdb: rdb, st: st, prefix: prefix}
}

func (b *redisBackend) key(grant int64) string { return b.prefix + strconv.FormatInt(grant, 10) }

// takeScript: KEYS[1] the grant's hash, KEYS[2] the owner's journal,
// KEYS[3] the set of owners; ARGV now (ms), amount, the hash's lifetime
// (ms), the hold key to journal under (empty: none), the journal record's
// head ("grant plan"), the owner, then per window its length (ms) and
// quota. It answers {-1} when the hash is not loaded, {0, window, closes
// at} when a window has no room (nothing changes), else {1, start, opened,
// start, opened, …}; a draw that fits is journaled in the same run.
var takeScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local now, amt = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = (#ARGV - 6) / 2
local s, u, o = {}, {}, {}
for i = 1, n do
  local len, q = tonumber(ARGV[2*i + 5]), tonumber(ARGV[2*i + 6])
  s[i] = tonumber(redis.call('HGET', KEYS[1], 's' .. i) or '0')
  u[i] = tonumber(redis.call('HGET', KEYS[1], 'u' .. i) or '0')
  o[i] = 0
  if s[i] == 0 or now >= s[i] + len then s[i], u[i], o[i] = now, 0, 1 end
  if u[i] + amt > q then return {0, i - 1, s[i] + len} end
end
local out = {1}
for i = 1, n do
  redis.call('HSET', KEYS[1], 's' .. i, s[i], 'u' .. i, u[i] + amt)
  out[2*i] = s[i]
  out[2*i + 1] = o[i]
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] ~= '' then
  local st = {}
  for i = 1, n do st[i] = string.format('%d', s[i]) end
  redis.call('HSET', KEYS[2], ARGV[4], ARGV[5] .. ' ' .. ARGV[2] .. ' 0 ' .. table.concat(st, ','))
  redis.call('SADD', KEYS[3], ARGV[6])
end
return out
`)

// addScript corrects the windows whose start is still the given one and
// applies a mark to the draw's journal record: KEYS the grant's hash, the
// owner's journal and the set of owners; ARGV delta, the hold key (empty:
// none), the mark ('drop' or 'settle'), the count a settled record keeps,
// the owner, the plan and the end's time (ms), then the starts. A marked
// record that is gone was taken back by a sweep (its owner was taken for
// dead while it ran): no window moves, and a settle leaves a late record
// (state 2, with the end's time) that the sweep counts once the call's
// row is stored.
var addScript = redis.NewScript(`
if ARGV[2] ~= '' and redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  if ARGV[3] == 'settle' then
    local g = string.match(KEYS[1], ':(%d+)$')
    redis.call('HSET', KEYS[2], ARGV[2], g .. ' ' .. ARGV[6] .. ' ' .. ARGV[4] .. ' 2 ' .. table.concat(ARGV, ',', 8) .. ' ' .. ARGV[7])
    redis.call('SADD', KEYS[3], ARGV[5])
  end
  return 2
end
for i = 8, #ARGV do
  if redis.call('HGET', KEYS[1], 's' .. (i - 7)) == ARGV[i] then
    redis.call('HINCRBY', KEYS[1], 'u' .. (i - 7), ARGV[1])
  end
end
if ARGV[2] == '' then return 1 end
if ARGV[3] == 'drop' then
  redis.call('HDEL', KEYS[2], ARGV[2])
  return 1
end
local rec = redis.call('HGET', KEYS[2], ARGV[2])
local g, p, _, _, st = string.match(rec, '^(%S+) (%S+) (%S+) (%S+) (%S*)$')
if g then redis.call('HSET', KEYS[2], ARGV[2], g .. ' ' .. p .. ' ' .. ARGV[4] .. ' 1 ' .. st) end
return 1
`)

// loadScript writes a loaded state unless another node loaded it first.
var loadScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)

// lifetime keeps a hash past its longest window, so an idle grant's state
// goes away by itself and is loaded again from the rows when needed.
func lifetime(wins []store.PlanTake) int64 {
	var m int64
	for _, w := range wins {
		m = max(m, w.LengthMS)
	}
	return m + time.Hour.Milliseconds()
}

func (b *redisBackend) take(ctx context.Context, grant int64, wins []store.PlanTake, nowMS, amount int64, j *store.PlanDraw) (store.PlanTaken, error) {
	hold, head, owner := "", "", ""
	if j != nil {
		hold, owner = j.HoldKey, j.Owner
		head = strconv.FormatInt(grant, 10) + " " + strconv.FormatInt(j.PlanID, 10)
	}
	args := []any{nowMS, amount, lifetime(wins), hold, head, owner}
	for _, w := range wins {
		args = append(args, w.LengthMS, w.Quota)
	}
	for attempt := 0; ; attempt++ {
		res, err := takeScript.Run(ctx, b.rdb, []string{b.key(grant), b.journalKey(owner), b.ownersKey()}, args...).Int64Slice()
		if err != nil {
			return store.PlanTaken{}, err
		}
		switch {
		case res[0] == -1 && attempt == 0:
			if err := b.load(ctx, grant, wins, nowMS); err != nil {
				return store.PlanTaken{}, err
			}
			continue
		case res[0] == -1:
			return store.PlanTaken{}, errors.New("plans: the window state did not load")
		case res[0] == 0:
			return store.PlanTaken{Spent: int(res[1]), ResetMS: res[2]}, nil
		}
		out := store.PlanTaken{OK: true, Starts: make([]int64, len(wins)), Opened: make([]bool, len(wins))}
		for i := range wins {
			out.Starts[i], out.Opened[i] = res[2*i+1], res[2*i+2] == 1
		}
		return out, nil
	}
}

// load rebuilds a grant's windows from its usage rows: each window's
// latest start the rows name, if still open, and the rows' sum in it.
func (b *redisBackend) load(ctx context.Context, grant int64, wins []store.PlanTake, nowMS int64) error {
	st, err := windowsFromRows(ctx, b.st, grant, wins, nowMS)
	if err != nil {
		return err
	}
	args := []any{lifetime(wins), "l", 1}
	for i, w := range st {
		if w.StartMS != 0 {
			args = append(args, "s"+strconv.Itoa(i+1), w.StartMS, "u"+strconv.Itoa(i+1), w.Used)
		}
	}
	return loadScript.Run(ctx, b.rdb, []string{b.key(grant)}, args...).Err()
}

func (b *redisBackend) add(ctx context.Context, grant int64, starts []int64, delta int64, mark store.PlanMark) error {
	if delta == 0 && mark.HoldKey == "" {
		return nil
	}
	op := "settle"
	if mark.Drop {
		op = "drop"
	}
	args := make([]any, 0, 7+len(starts))
	args = append(args, delta, mark.HoldKey, op, mark.Counted, mark.Owner, mark.PlanID, mark.At.UnixMilli())
	for _, s := range starts {
		args = append(args, strconv.FormatInt(s, 10))
	}
	return addScript.Run(ctx, b.rdb, []string{b.key(grant), b.journalKey(mark.Owner), b.ownersKey()}, args...).Err()
}

func (b *redisBackend) live(ctx context.Context, grant int64, n int) ([]store.PlanWindowState, error) {
	fields := make([]string, 0, 2*n)
	for i := 1; i <= n; i++ {
		fields = append(fields, "s"+strconv.Itoa(i), "u"+strconv.Itoa(i))
	}
	vals, err := b.rdb.HMGet(ctx, b.key(grant), fields...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]store.PlanWindowState, n)
	for i := range out {
		out[i] = store.PlanWindowState{GrantID: grant, Index: i, StartMS: num(vals[2*i]), Used: num(vals[2*i+1])}
	}
	return out, nil
}

func num(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
