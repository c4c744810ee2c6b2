package ratelimit

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// In Redis the period counters outlive the node whose calls they hold: a
// node killed mid-call leaves its calls' estimates counted until the
// period ends, and the budget looks more spent than it is. So each share
// taken there is journaled in the same script run, in a hash per owner
// (the billing node id: hold key → "amount counter counter …") beside the
// set of owners. A refund drops the record in the script run that corrects
// the counters; a settle turns it into a settled record ("s charge
// counter …") in that run instead, kept until the sweep finds the hold's
// settle stored: until then the row may yet be refused (a sweep released
// the hold while this node stalled) or die in the writer's queue, and the
// charge must then be taken back. Whatever a dead owner left is ended by
// the sweep (budgetsweep.go) once, as the books say the call ended. A
// share is corrected only by whoever changes its record, so the owner's
// late end and a sweep never both move a counter.

// journalTag names the journal record of one share: its owner and the hold
// key of the reservation it belongs to. kept: the share belongs to a
// durable record (a task, a batch) that ends it, maybe in another process.
type journalTag struct {
	owner, hold string
	kept        bool
}

// JournalAs names the owner of this process's budget shares in the
// journal: the billing node id, whose lease says when the owner is gone.
// It is set once, before the first call; unset, nothing is journaled.
func (s *Service) JournalAs(owner string) { s.owner = owner }

// journal is the tag of the share of hold, nil when nothing is journaled:
// no owner, nothing held, or counters that live in this process only.
func (s *Service) journal(hold string, amount int64) *journalTag {
	if s.owner == "" || hold == "" || amount <= 0 {
		return nil
	}
	if _, shared := s.be.(*redisBackend); !shared {
		return nil
	}
	return &journalTag{owner: s.owner, hold: hold}
}

// budgetRecord is a journal record: the amount and the counters (without
// the backend's prefix) it was taken from.
func budgetRecord(amount int64, takes []budgetTake) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(amount, 10))
	for i := range takes {
		b.WriteByte(' ')
		b.WriteString(takes[i].key)
	}
	return b.String()
}

// keptMark starts the record of a share handed to a durable record;
// settledMark the record of a share settled, whose row may not be stored.
const (
	keptMark    = "k "
	settledMark = "s "
)

// journalShare is a parsed journal record: its hold key and text, the
// amount it counts (the estimate, or the charge once settled) and its
// counters (without the backend's prefix).
type journalShare struct {
	hold, raw     string
	amount        int64
	keys          []string
	kept, settled bool
}

// parseBudgetRecord reads a record; ok is false for one this version does
// not understand (it is left for an operator to see). Releases before
// settled records read one as not understood, and so leave it alone.
func parseBudgetRecord(hold, raw string) (sh journalShare, ok bool) {
	sh = journalShare{hold: hold, raw: raw}
	rec, kept := strings.CutPrefix(raw, keptMark)
	rec, settled := strings.CutPrefix(rec, settledMark)
	sh.kept, sh.settled = kept, settled && !kept
	f := strings.Fields(rec)
	if len(f) < 2 || kept && settled {
		return sh, false
	}
	amount, err := strconv.ParseInt(f[0], 10, 64)
	sh.amount, sh.keys = amount, f[1:]
	return sh, err == nil && amount > 0
}

func (b *redisBackend) budgetJournalKey(owner string) string { return b.prefix + "bj:" + owner }
func (b *redisBackend) budgetOwnersKey() string              { return b.prefix + "bj-owners" }

// budgetEndScript: KEYS the owner's journal, the late records, then the
// counters; ARGV the hold key, the correction, whether to correct without
// a record, and for a settle the charge, the owner and the end's time (ms)
// (charge 0: a refund). If the record is there (or always, for a kept
// share, whose end is decided by the durable record and the database
// alone), it corrects every counter that still exists (a counter whose
// period ended is left to expire; none goes below zero), and drops the
// record, or for a settle (above 0) of a share not kept marks it settled at the
// charge, for the sweep to drop once the row is stored (or to take the
// charge back once the row is known refused). Returns {1, used…} when it
// corrected, {0} when it did not. A settle whose record a sweep ended (its
// owner was taken for dead while it ran) leaves a late record instead,
// "owner charge ms counter…", for the sweep to count once the call's row
// is stored (see sweepLate).
var budgetEndScript = redis.NewScript(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if rec and ARGV[3] ~= '1' and tonumber(ARGV[4]) > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], 's ' .. ARGV[4] .. ' ' .. string.match(rec, '^%S+ (.*)$'))
elseif rec then
  redis.call('HDEL', KEYS[1], ARGV[1])
elseif ARGV[3] ~= '1' then
  if ARGV[4] ~= '0' then
    local late = ARGV[5] .. ' ' .. ARGV[4] .. ' ' .. ARGV[6]
    for i = 3, #KEYS do late = late .. ' ' .. KEYS[i] end
    redis.call('HSET', KEYS[2], ARGV[1], late)
  end
  return {0}
end
local out = {1}
for i = 3, #KEYS do
  local v = 0
  if redis.call('EXISTS', KEYS[i]) == 1 then
    v = redis.call('INCRBY', KEYS[i], ARGV[2])
    if v < 0 then redis.call('SET', KEYS[i], 0, 'KEEPTTL') v = 0 end
  end
  out[i - 1] = v
end
return out
`)

// budgetEnd ends the journaled share jr by correcting keys (empty ones
// skipped) by delta, once: ended is false when the record was already
// gone (a sweep ended it) and the share is not kept, and then nothing
// moved; a settle's charge (late, 0 for a refund) is then owed by a late
// record made at at, and otherwise kept in a settled record. used is each key's spending after the
// correction.
func (b *redisBackend) budgetEnd(ctx context.Context, jr *journalTag, keys []string, delta, late int64, at time.Time) (used []int64, ended bool, err error) {
	var kb [2 + maxBudgets]string
	ks := append(kb[:0], b.budgetJournalKey(jr.owner), b.budgetLateKey())
	var idx [maxBudgets]int
	n := 0
	for i, k := range keys {
		if k != "" {
			ks = append(ks, b.prefix+k)
			idx[n] = i
			n++
		}
	}
	res, err := budgetEndScript.Run(ctx, b.rdb, ks, jr.hold, delta, b2s(jr.kept), late, jr.owner, at.UnixMilli()).Int64Slice()
	if err != nil {
		return nil, false, err
	}
	if len(res) < 1 || (res[0] == 1 && len(res) != len(ks)-1) {
		return nil, false, errors.New("ratelimit: unexpected answer from the Redis budget end script")
	}
	if res[0] == 0 {
		return nil, false, nil
	}
	used = make([]int64, len(keys))
	for j, i := range idx[:n] {
		used[i] = res[1+j]
	}
	return used, true, nil
}

// keepScript: KEYS the owner's journal; ARGV the hold key and the kept
// mark. It marks the record kept, if it is there.
var keepScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and string.sub(v, 1, #ARGV[2]) ~= ARGV[2] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. v) end
return 0
`)

// budgetKeep marks jr's record kept: the sweep then leaves the share to
// the durable record unless the books say its hold was released.
func (b *redisBackend) budgetKeep(ctx context.Context, jr *journalTag) error {
	return keepScript.Run(ctx, b.rdb, []string{b.budgetJournalKey(jr.owner)}, jr.hold, keptMark).Err()
}

func b2s(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// budgetOwners lists the owners with journal records.
func (b *redisBackend) budgetOwners(ctx context.Context) ([]string, error) {
	return b.rdb.SMembers(ctx, b.budgetOwnersKey()).Result()
}

// budgetRecords is owner's journal: hold key → record.
func (b *redisBackend) budgetRecords(ctx context.Context, owner string) (map[string]string, error) {
	return b.rdb.HGetAll(ctx, b.budgetJournalKey(owner)).Result()
}

// forgetBudgetOwner drops an owner whose journal is empty (a record it
// adds later, were it alive after all, puts it back).
func (b *redisBackend) forgetBudgetOwner(ctx context.Context, owner string) error {
	return b.rdb.SRem(ctx, b.budgetOwnersKey(), owner).Err()
}
