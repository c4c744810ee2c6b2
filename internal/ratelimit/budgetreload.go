package ratelimit

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A counter loaded from the usage rows (the first call of a period, or
// after Redis lost it) counts every row stored by then, among them the
// rows of late records (budgetlate.go) already stored, which the sweep
// would then add a second time: a node whose journal Redis lost ends its
// call with a late record naming a counter that is gone too, and whoever
// loads the counter next may read the call's row. So the load asks the
// books, before and after it reads the rows, which late records naming
// the counter have their rows stored, and takes the counter off those
// records in the step that sets it; a late record whose row is not
// stored keeps it, its row being outside the sum.

// CountLateWith gives the counters' load the books that say whether a
// late record's row is stored (billing.Service); without them a load
// leaves late records as they are.
func (s *Service) CountLateWith(books BudgetBooks) {
	if rb, ok := s.be.(*redisBackend); ok {
		rb.books = books
	}
}

// loadScript: KEYS the counter and the late records; ARGV the sum, the
// counter's lifetime (ms), then each late record's hold the load read,
// followed by '1' when its row is in the sum. It sets the counter only if
// it is still missing and every late record naming it is one the load
// read (one made meanwhile may have its row in the sum: read again), and
// takes the counter off the records whose rows are in the sum (a record
// left naming no counter goes). Returns 1 done, 0 read again.
var loadScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
local known = {}
for i = 3, #ARGV, 2 do known[ARGV[i]] = ARGV[i + 1] end
local recs = redis.call('HGETALL', KEYS[2])
for i = 1, #recs, 2 do
  local hold, rec = recs[i], recs[i + 1]
  if string.find(' ' .. rec .. ' ', ' ' .. KEYS[1] .. ' ', 1, true) then
    if not known[hold] then return 0 end
    if known[hold] == '1' then
      local out = {}
      for f in string.gmatch(rec, '%S+') do
        if f ~= KEYS[1] then table.insert(out, f) end
      end
      if #out > 3 then redis.call('HSET', KEYS[2], hold, table.concat(out, ' ')) else redis.call('HDEL', KEYS[2], hold) end
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// loadCounter loads the counter key of t from the rows unless another
// node did first (see loadScript).
func (b *redisBackend) loadCounter(ctx context.Context, key string, t *budgetTake, load func(context.Context, *budgetTake) (int64, error)) error {
	// expire may come from a test's clock; a day of slack keeps the
	// counter past its period either way, and a period's key is never
	// read after the period.
	ttl := max(time.Until(t.expire)+24*time.Hour, time.Hour)
	for range 3 {
		holds, err := b.lateNaming(ctx, key)
		if err != nil {
			return err
		}
		before, err := b.lateStored(ctx, holds)
		if err != nil {
			return err
		}
		used, err := load(ctx, t)
		if err != nil {
			return &storeErr{err}
		}
		after, err := b.lateStored(ctx, holds)
		if err != nil {
			return err
		}
		if !maps.Equal(before, after) {
			continue // a row stored while the sum was read: in it or not, unknown
		}
		args := []any{used, ttl.Milliseconds()}
		for _, h := range holds {
			args = append(args, h, b2s(before[h]))
		}
		n, err := loadScript.Run(ctx, b.rdb, []string{key, b.budgetLateKey()}, args...).Int()
		if err != nil || n == 1 {
			return err
		}
	}
	return errors.New("ratelimit: late ends kept changing while a period counter was loaded")
}

// lateNaming lists the holds of the late records that name the counter
// key (a whole Redis key).
func (b *redisBackend) lateNaming(ctx context.Context, key string) ([]string, error) {
	recs, err := b.rdb.HGetAll(ctx, b.budgetLateKey()).Result()
	if err != nil {
		return nil, err
	}
	var holds []string
	for hold, rec := range recs {
		if strings.Contains(" "+rec+" ", " "+key+" ") {
			holds = append(holds, hold)
		}
	}
	return holds, nil
}

// lateStored says which of holds have their settles, and so their rows,
// stored (none without books).
func (b *redisBackend) lateStored(ctx context.Context, holds []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(holds) == 0 || b.books == nil {
		return out, nil
	}
	ends, err := b.books.HoldEnds(ctx, holds)
	if err != nil {
		return nil, &storeErr{err}
	}
	for _, h := range holds {
		out[h] = ends[h].Settled
	}
	return out, nil
}
