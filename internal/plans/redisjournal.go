package plans

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// With Redis the journal of live draws lives beside the windows, so that a
// draw and its record are one script run: a hash per owner (hold key →
// "grant plan counted settled start,start,…") and the set of owners.

func (b *redisBackend) journalKey(owner string) string { return b.prefix + "j:" + owner }
func (b *redisBackend) ownersKey() string              { return b.prefix + "owners" }

// undoScript: KEYS the grant's hash and the owner's journal; ARGV the hold
// key, the move that takes the count back (its negative, as an integer
// string: Lua's -0 is no integer to HINCRBY), then the starts. It drops the record and,
// only if it was there, takes the count back from the windows that still
// have its starts: a draw is undone once, whoever sweeps.
var undoScript = redis.NewScript(`
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[1], 's' .. (i - 2)) == ARGV[i] then
    redis.call('HINCRBY', KEYS[1], 'u' .. (i - 2), ARGV[2])
  end
end
return 1
`)

func (b *redisBackend) undo(ctx context.Context, d store.PlanDraw) (bool, error) {
	// A draw handed over to a durable ticket (see handOver) is the
	// record's to end: its journal record is only dropped. (A record only
	// dropped anyway, the common case of a stored settle, asks nothing.)
	if d.Amount != 0 {
		switch _, err := b.st.Draw(ctx, d.HoldKey); {
		case err == nil:
			d.Amount = 0
		case !errors.Is(err, store.ErrNotFound):
			return false, err
		}
	}
	args := []any{d.HoldKey, -d.Amount}
	for _, s := range d.Starts {
		args = append(args, strconv.FormatInt(s, 10))
	}
	n, err := undoScript.Run(ctx, b.rdb, []string{b.key(d.GrantID), b.journalKey(d.Owner)}, args...).Int()
	return n == 1, err
}

// makeLateScript: KEYS the grant's hash and the owner's journal; ARGV the
// hold key, the move that takes the charge back, the time (ms), then the
// starts. Only a record still settled turns late, so a draw is made late
// once, whoever sweeps, and its charge taken back with it.
var makeLateScript = redis.NewScript(`
local rec = redis.call('HGET', KEYS[2], ARGV[1])
if not rec then return 0 end
local g, p, c, st = string.match(rec, '^(%S+) (%S+) (%S+) 1 (%S*)$')
if not g then return 0 end
for i = 4, #ARGV do
  if redis.call('HGET', KEYS[1], 's' .. (i - 3)) == ARGV[i] then
    redis.call('HINCRBY', KEYS[1], 'u' .. (i - 3), ARGV[2])
  end
end
redis.call('HSET', KEYS[2], ARGV[1], g .. ' ' .. p .. ' ' .. c .. ' 2 ' .. st .. ' ' .. ARGV[3])
return 1
`)

func (b *redisBackend) makeLate(ctx context.Context, d store.PlanDraw, at time.Time) (bool, error) {
	args := []any{d.HoldKey, -d.Amount, at.UnixMilli()}
	for _, s := range d.Starts {
		args = append(args, strconv.FormatInt(s, 10))
	}
	n, err := makeLateScript.Run(ctx, b.rdb, []string{b.key(d.GrantID), b.journalKey(d.Owner)}, args...).Int()
	return n == 1, err
}

// handOver stores the draw as the durable ticket's record, then drops its
// journal record. A crash in between leaves both; undo then finds the
// durable record and leaves the windows to it.
func (b *redisBackend) handOver(ctx context.Context, d store.PlanDraw) error {
	if err := b.st.KeepDraw(ctx, d); err != nil {
		return err
	}
	return b.rdb.HDel(ctx, b.journalKey(d.Owner), d.HoldKey).Err()
}

func (b *redisBackend) owners(ctx context.Context) ([]string, error) {
	return b.rdb.SMembers(ctx, b.ownersKey()).Result()
}

func (b *redisBackend) forgetOwner(ctx context.Context, owner string) error {
	return b.rdb.SRem(ctx, b.ownersKey(), owner).Err()
}

func (b *redisBackend) journal(ctx context.Context, owner string) ([]store.PlanDraw, error) {
	raw, err := b.rdb.HGetAll(ctx, b.journalKey(owner)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]store.PlanDraw, 0, len(raw))
	for k, v := range raw {
		if d, ok := parseJournal(owner, k, v); ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// parseJournal reads one record; a malformed one is skipped (and stays,
// for an operator to see). A late record (state 2) has a sixth field, the
// end's time in Unix ms, so that releases before late records skip it
// instead of taking it for a reserved draw.
func parseJournal(owner, hold, rec string) (store.PlanDraw, bool) {
	f := strings.Split(rec, " ")
	late := len(f) == 6 && f[3] == "2"
	if len(f) != 5 && !late {
		return store.PlanDraw{}, false
	}
	d := store.PlanDraw{HoldKey: hold, Owner: owner, Settled: f[3] == "1", Late: late}
	var e [4]error
	d.GrantID, e[0] = strconv.ParseInt(f[0], 10, 64)
	d.PlanID, e[1] = strconv.ParseInt(f[1], 10, 64)
	d.Amount, e[2] = strconv.ParseInt(f[2], 10, 64)
	if late {
		var ms int64
		ms, e[3] = strconv.ParseInt(f[5], 10, 64)
		d.EndedAt = time.UnixMilli(ms)
	}
	for _, err := range e {
		if err != nil {
			return d, false
		}
	}
	for _, s := range strings.Split(f[4], ",") {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return d, false
		}
		d.Starts = append(d.Starts, v)
	}
	return d, true
}
