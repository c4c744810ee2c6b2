package ratelimit

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A node taken for dead while it runs (its lease lapsed while it stalled)
// may find, when it ends a call, that the sweep ended the call's share
// already: given it back, since the books said nothing of the call then.
// Its row may still be stored after that (the hold never reached the
// database before the stall, so no sweep released it), or refused (the
// sweep released the hold). So the late settle moves no counter: it leaves
// a late record, in one hash for every owner, and the sweep counts its
// charge once the books say the hold settled, or drops it once they say
// the hold was released, or once its owner is gone past lateGrace.

// lateGrace is how long a late record of an owner taken for dead again
// waits for its row before the sweep drops it unstored: longer than the
// moment between the late end and its settle reaching the balance
// journal, during which the books may still call the owner abandoned.
const lateGrace = 2 * time.Minute

func (b *redisBackend) budgetLateKey() string { return b.prefix + "bj-late" }

// lateEndScript: KEYS the late records, then the counters; ARGV the hold
// key and what to add. It drops the record and, only if it was there,
// adds to every counter that still exists: a late record is ended once,
// whoever sweeps.
var lateEndScript = redis.NewScript(`
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '0' then
  for i = 2, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCRBY', KEYS[i], ARGV[2]) end
  end
end
return 1
`)

// lateRecord is a parsed late record; keys are whole Redis keys.
type lateRecord struct {
	owner  string
	charge int64
	at     time.Time
	keys   []string
}

// parseLateRecord reads "owner charge ms counter…"; ok is false for one
// this version does not understand (it is left for an operator to see).
func parseLateRecord(rec string) (lateRecord, bool) {
	f := strings.Fields(rec)
	if len(f) < 4 {
		return lateRecord{}, false
	}
	charge, err1 := strconv.ParseInt(f[1], 10, 64)
	ms, err2 := strconv.ParseInt(f[2], 10, 64)
	return lateRecord{owner: f[0], charge: charge, at: time.UnixMilli(ms), keys: f[3:]}, err1 == nil && err2 == nil
}

// sweepLate ends the late records the books have decided. It answers how
// many it ended.
func (s *Service) sweepLate(ctx context.Context, rb *redisBackend, books BudgetBooks) (int, error) {
	recs, err := rb.rdb.HGetAll(ctx, rb.budgetLateKey()).Result()
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	holds := make([]string, 0, len(recs))
	for h := range recs {
		holds = append(holds, h)
	}
	ends, err := books.HoldEnds(ctx, holds)
	if err != nil {
		return 0, err
	}
	gone := map[string]bool{}
	ended := 0
	for hold, raw := range recs {
		rec, ok := parseLateRecord(raw)
		if !ok {
			continue
		}
		var add int64
		switch end := ends[hold]; {
		case end.Settled:
			add = rec.charge
		case end.Released:
		case s.Now().Sub(rec.at) <= lateGrace:
			continue
		default:
			g, asked := gone[rec.owner]
			if !asked {
				if g, err = books.Abandoned(ctx, rec.owner); err != nil {
					return ended, err
				}
				gone[rec.owner] = g
			}
			if !g {
				continue
			}
		}
		n, err := lateEndScript.Run(ctx, rb.rdb, append([]string{rb.budgetLateKey()}, rec.keys...), hold, add).Int()
		if err != nil {
			return ended, err
		}
		ended += n
	}
	return ended, nil
}

// lateRecordOf is the late record a sweep leaves for owner's settled share
// sh when it takes the charge back at at: "owner charge ms counter…".
func lateRecordOf(rb *redisBackend, owner string, sh journalShare, at time.Time) string {
	var b strings.Builder
	b.WriteString(owner)
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(sh.amount, 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(at.UnixMilli(), 10))
	for _, k := range sh.keys {
		b.WriteByte(' ')
		b.WriteString(rb.prefix + k)
	}
	return b.String()
}

// sweepEndScript: KEYS the owner's journal, the late records, then the
// counters; ARGV the hold key, the record as the sweep read it, the move
// and the late record to leave (” for none). Only a record still as read
// is ended: the owner's settle may have changed it since (it was taken
// for dead while it ran), and then the sweep reads it again next time.
var sweepEndScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
if ARGV[3] ~= '0' then
  for i = 3, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      if redis.call('INCRBY', KEYS[i], ARGV[3]) < 0 then redis.call('SET', KEYS[i], 0, 'KEEPTTL') end
    end
  end
end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[4]) end
return 1
`)

// sweepEnd ends owner's share sh as m says, if its record is still as the
// sweep read it; it answers whether it did.
func (b *redisBackend) sweepEnd(ctx context.Context, owner string, sh journalShare, m sweepMove) (bool, error) {
	keys := make([]string, 0, 2+len(sh.keys))
	keys = append(keys, b.budgetJournalKey(owner), b.budgetLateKey())
	for _, k := range sh.keys {
		keys = append(keys, b.prefix+k)
	}
	n, err := sweepEndScript.Run(ctx, b.rdb, keys, sh.hold, sh.raw, m.delta, m.lateRec).Int()
	return n == 1, err
}
