package billing

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// redisBalances keeps live balances in Redis so that several gateway nodes
// share them. Redis is a cache of the ledger: each balance is loaded from
// the database the first time any node needs it in the current epoch (SET
// NX, so the first loader wins; see redis_epoch.go for what happens when
// Redis forgets) and changed only by the scripts below, which check and
// move user and key balances in one atomic step.
type redisBalances struct {
	rdb  redis.UniversalClient
	st   store.Store
	root string // the gateway's key prefix
	ep   epochState
	lg   *slog.Logger
}

// NewRedisBalances returns multi-node balances in Redis backed by st.
func NewRedisBalances(rdb redis.UniversalClient, st store.Store) Balances {
	return newRedisBalances(rdb, st)
}

func newRedisBalances(rdb redis.UniversalClient, st store.Store) *redisBalances {
	return &redisBalances{rdb: rdb, st: st, root: RedisKeyPrefix(rdb),
		ep: epochState{pause: defaultRebuildPause, wait: defaultRebuildWait}}
}

func (r *redisBalances) log() *slog.Logger {
	if r.lg != nil {
		return r.lg
	}
	return slog.Default()
}

// RedisKeyPrefix is the prefix of the gateway's Redis keys. On Redis
// Cluster it carries the hash tag {turnpike}, so that the keys one script
// touches (a user's and a key's balance, a call's rate windows) live in one
// slot; one shard then carries all of them.
func RedisKeyPrefix(rdb redis.UniversalClient) string {
	if _, ok := rdb.(*redis.ClusterClient); ok {
		return "{turnpike}:"
	}
	return "turnpike:"
}

// unlimitedMark is stored for keys without a quota of their own.
const unlimitedMark = "unlimited"

// Results of the take script besides 0 (done) and the epoch results.
const (
	rNoUser     = -1
	rNoToken    = -2
	rShortUser  = -3
	rShortToken = -4
)

// takeScript: KEYS user, token, epoch; ARGV amount, force (0/1), hasToken
// (0/1), epoch id.
var takeScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[4] then return -5 end
local u = redis.call('GET', KEYS[1])
if not u then return -1 end
local amount = tonumber(ARGV[1])
local force = ARGV[2] == '1'
local t = false
if ARGV[3] == '1' then
  t = redis.call('GET', KEYS[2])
  if not t then return -2 end
end
if not force and tonumber(u) < amount then return -3 end
if t and t ~= 'unlimited' and not force and tonumber(t) < amount then return -4 end
redis.call('DECRBY', KEYS[1], amount)
if t and t ~= 'unlimited' then redis.call('DECRBY', KEYS[2], amount) end
return 0
`)

// Statuses of the add script.
const (
	addDone      = 0
	addMissing   = 1
	addUnlimited = 2
	addLost      = 5
)

// addScript: KEYS key, epoch; ARGV delta, epoch id. It returns {status,
// new value}; an unlimited key is left alone.
var addScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return {5, 0} end
local v = redis.call('GET', KEYS[1])
if not v then return {1, 0} end
if v == 'unlimited' then return {2, -1} end
return {0, redis.call('INCRBY', KEYS[1], ARGV[1])}
`)

func (r *redisBalances) space(epoch string) string { return r.root + "balance:" + epoch + ":" }
func (r *redisBalances) userKey(epoch string, id int64) string {
	return r.space(epoch) + "u:" + strconv.FormatInt(id, 10)
}
func (r *redisBalances) tokenKey(epoch string, id int64) string {
	return r.space(epoch) + "t:" + strconv.FormatInt(id, 10)
}

// storeError marks a failure to read a balance from the database, so that
// callers can tell a database outage from a Redis one.
type storeError struct{ err error }

func (e *storeError) Error() string {
	return "billing: balance not read from the database: " + e.err.Error()
}
func (e *storeError) Unwrap() error { return e.err }

func (r *redisBalances) loadUser(ctx context.Context, id int64) error {
	return r.load(ctx, func(ep string) string { return r.userKey(ep, id) }, func() (any, error) {
		u, err := r.st.Users().Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return u.Quota, nil
	})
}

func (r *redisBalances) loadToken(ctx context.Context, id int64) error {
	return r.load(ctx, func(ep string) string { return r.tokenKey(ep, id) }, func() (any, error) {
		t, err := r.st.Tokens().Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if t.Quota == -1 { // an overdrawn limited key stays limited
			return unlimitedMark, nil
		}
		return t.Quota, nil
	})
}

// load stores a balance read from the database once the epoch's gate is
// open; the read comes after the wait, so it sees every move of an epoch
// that was lost. An epoch that changed meanwhile is left to the caller's
// next try.
func (r *redisBalances) load(ctx context.Context, key func(string) string, read func() (any, error)) error {
	ep, err := r.ready(ctx)
	if err != nil {
		return err
	}
	v, err := read()
	if err != nil {
		return &storeError{err: err}
	}
	return loadScript.Run(ctx, r.rdb, []string{key(ep), r.epochKey(), r.gateKey()}, ep, v).Err()
}

func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (r *redisBalances) Take(ctx context.Context, userID, tokenID, amount int64, force bool) error {
	return r.runMove(ctx, userID, tokenID, force, func(ep string) (int, error) {
		keys := []string{r.userKey(ep, userID), r.tokenKey(ep, tokenID), r.epochKey()}
		return takeScript.Run(ctx, r.rdb, keys, amount, b2s(force), b2s(tokenID != 0), ep).Int()
	})
}

// moveAttempts bounds the tries of one move: a lost epoch, then a missing
// user and a missing key, then the move.
const moveAttempts = 5

// runMove runs a balance script in the current epoch, following a lost
// epoch and loading a balance Redis does not hold yet from the database,
// and trying again: the one retry rule of every move. A forced move is
// recorded in the ledger whatever happens here, so when it fails in Redis
// the epoch is marked dirty and rebuilt from the ledger.
func (r *redisBalances) runMove(ctx context.Context, userID, tokenID int64, force bool, run func(epoch string) (int, error)) error {
	err := r.tryMove(ctx, userID, tokenID, run)
	var se *storeError
	if err != nil && force && !errors.Is(err, errRebuilding) && !errors.As(err, &se) {
		r.markDirty(r.current(), err)
	}
	return err
}

func (r *redisBalances) tryMove(ctx context.Context, userID, tokenID int64, run func(epoch string) (int, error)) error {
	for attempt := 0; attempt < moveAttempts; attempt++ {
		ep, err := r.epoch(ctx)
		if err != nil {
			return err
		}
		res, err := run(ep)
		if err != nil {
			r.failed(ep, err)
			return err
		}
		switch res {
		case 0:
			return nil
		case rShortUser:
			return ErrInsufficientUser
		case rShortToken:
			return ErrInsufficientToken
		case rLostEpoch:
			_, _, err = r.look(ctx)
		case rNoUser:
			err = r.loadUser(ctx, userID)
		case rNoToken:
			err = r.loadToken(ctx, tokenID)
		}
		if err != nil {
			return err
		}
	}
	return errRebuilding
}

// failed marks the epoch dirty after a script failed in a way that leaves
// open whether it ran. A refused connection cannot have run it.
func (r *redisBalances) failed(ep string, err error) {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return
	}
	r.markDirty(ep, err)
}

func (r *redisBalances) Give(ctx context.Context, userID, tokenID, amount int64) error {
	if _, err := r.AddUser(ctx, userID, amount); err != nil {
		return err
	}
	if tokenID == 0 {
		return nil
	}
	_, err := r.AddToken(ctx, tokenID, amount)
	return err
}

// add runs the add script, loading the balance first when it is missing
// (loaded) or leaving it missing (!loaded). It returns the new value and
// the script's status.
func (r *redisBalances) add(ctx context.Context, key func(string) string, delta int64, load func() error) (int64, int64, error) {
	for attempt := 0; attempt < moveAttempts; attempt++ {
		ep, err := r.epoch(ctx)
		if err != nil {
			return 0, 0, err
		}
		res, err := addScript.Run(ctx, r.rdb, []string{key(ep), r.epochKey()}, delta, ep).Int64Slice()
		if err != nil {
			if delta != 0 {
				r.failed(ep, err)
			}
			return 0, 0, err
		}
		if len(res) != 2 {
			return 0, 0, errors.New("billing: unexpected add script answer")
		}
		switch res[0] {
		case addLost:
			_, _, err = r.look(ctx)
		case addMissing:
			if load == nil {
				return 0, addMissing, nil
			}
			err = load()
		default:
			return res[1], res[0], nil
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return 0, 0, errRebuilding
}

func (r *redisBalances) AddUser(ctx context.Context, userID, delta int64) (int64, error) {
	v, _, err := r.add(ctx, func(ep string) string { return r.userKey(ep, userID) }, delta,
		func() error { return r.loadUser(ctx, userID) })
	return v, err
}

func (r *redisBalances) AddToken(ctx context.Context, tokenID, delta int64) (int64, error) {
	v, _, err := r.add(ctx, func(ep string) string { return r.tokenKey(ep, tokenID) }, delta,
		func() error { return r.loadToken(ctx, tokenID) })
	return v, err
}

func (r *redisBalances) User(ctx context.Context, userID int64) (int64, error) {
	return r.AddUser(ctx, userID, 0)
}

func (r *redisBalances) Token(ctx context.Context, tokenID int64) (int64, bool, error) {
	v, status, err := r.add(ctx, func(ep string) string { return r.tokenKey(ep, tokenID) }, 0,
		func() error { return r.loadToken(ctx, tokenID) })
	if err != nil {
		return 0, false, err
	}
	return v, status != addUnlimited, nil
}

func (r *redisBalances) Forget(userID, tokenID int64) {
	ctx := context.Background()
	ep := r.current()
	if ep == "" {
		return // nothing was loaded by this node's view; the next use loads
	}
	if userID != 0 {
		r.rdb.Del(ctx, r.userKey(ep, userID))
	}
	if tokenID != 0 {
		r.rdb.Del(ctx, r.tokenKey(ep, tokenID))
	}
}

// Committed moves the balances Redis holds; a balance Redis does not hold
// is loaded from the database on first use, which already has the
// movement. A node loading that very balance at the same instant may read
// the database just before the commit and then SET NX the old value: the
// window is one Redis round trip between the commit and the move, and is
// not closed.
func (r *redisBalances) Committed(ctx context.Context, write func() ([]Move, error)) error {
	moves, err := write()
	if err != nil {
		return err
	}
	for _, mv := range moves {
		if err := r.addLoaded(ctx, mv.UserID, false, mv.Delta); err != nil {
			return err
		}
		if mv.TokenID != 0 {
			if err := r.addLoaded(ctx, mv.TokenID, true, mv.Delta); err != nil {
				return err
			}
		}
	}
	return nil
}

// addLoaded adds delta to a balance Redis holds and leaves a missing one
// missing.
func (r *redisBalances) addLoaded(ctx context.Context, id int64, token bool, delta int64) error {
	key := func(ep string) string { return r.userKey(ep, id) }
	if token {
		key = func(ep string) string { return r.tokenKey(ep, id) }
	}
	_, _, err := r.add(ctx, key, delta, nil)
	return err
}

// moveScript: KEYS user, token, journal, journal set, epoch; ARGV delta,
// force (0/1), hasToken (0/1), entry key, journal record, node, epoch id.
// It moves the user and (limited) key by delta and records the move in the
// node's journal, all or nothing; results as takeScript's.
var moveScript = redis.NewScript(`
if redis.call('GET', KEYS[5]) ~= ARGV[7] then return -5 end
local u = redis.call('GET', KEYS[1])
if not u then return -1 end
local t = false
if ARGV[3] == '1' then
  t = redis.call('GET', KEYS[2])
  if not t then return -2 end
end
local d = tonumber(ARGV[1])
if d < 0 and ARGV[2] ~= '1' then
  if tonumber(u) < -d then return -3 end
  if t and t ~= 'unlimited' and tonumber(t) < -d then return -4 end
end
redis.call('INCRBY', KEYS[1], d)
if t and t ~= 'unlimited' then redis.call('INCRBY', KEYS[2], d) end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
redis.call('SADD', KEYS[4], ARGV[6])
return 0
`)

// undoScript: KEYS journal, user, token, epoch; ARGV entry key, undo
// (0/1), delta, hasToken (0/1), epoch id. It removes the journal record
// and, when asked and the record was still there, takes its move back from
// the balances Redis holds (a balance not loaded reads the database, which
// never had the move). A journal of an epoch that ended is left alone: its
// balances were rebuilt from the ledger. Returns 1 when it removed the
// record.
var undoScript = redis.NewScript(`
if redis.call('GET', KEYS[4]) ~= ARGV[5] then return 0 end
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] == '1' then
  local d = tonumber(ARGV[3])
  if redis.call('GET', KEYS[2]) then redis.call('INCRBY', KEYS[2], -d) end
  if ARGV[4] == '1' then
    local t = redis.call('GET', KEYS[3])
    if t and t ~= 'unlimited' then redis.call('INCRBY', KEYS[3], -d) end
  end
end
return 1
`)

var _ Journal = (*redisBalances)(nil)

func (r *redisBalances) journalKey(ep, node string) string { return r.space(ep) + "journal:" + node }
func (r *redisBalances) journalSet(ep string) string       { return r.space(ep) + "journals" }

// A journal record is "<user> <key> <delta>", then " <item>" when the
// move carries its encoded billing item.
func (r *redisBalances) MoveFor(ctx context.Context, node, entryKey string, item []byte, userID, tokenID, delta int64, force bool) error {
	record := strconv.FormatInt(userID, 10) + " " + strconv.FormatInt(tokenID, 10) + " " + strconv.FormatInt(delta, 10)
	if len(item) > 0 {
		record += " " + string(item)
	}
	return r.runMove(ctx, userID, tokenID, force, func(ep string) (int, error) {
		keys := []string{r.userKey(ep, userID), r.tokenKey(ep, tokenID), r.journalKey(ep, node), r.journalSet(ep), r.epochKey()}
		return moveScript.Run(ctx, r.rdb, keys, delta, b2s(force), b2s(tokenID != 0), entryKey, record, node, ep).Int()
	})
}

func (r *redisBalances) Written(ctx context.Context, node string, entryKeys []string) error {
	ep := r.current()
	if ep == "" {
		return nil
	}
	return r.rdb.HDel(ctx, r.journalKey(ep, node), entryKeys...).Err()
}

func (r *redisBalances) Nodes(ctx context.Context) ([]string, error) {
	ep, err := r.epoch(ctx)
	if err != nil {
		return nil, err
	}
	return r.rdb.SMembers(ctx, r.journalSet(ep)).Result()
}

func (r *redisBalances) Pending(ctx context.Context, node string) (map[string][]byte, error) {
	ep, err := r.epoch(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := r.rdb.HGetAll(ctx, r.journalKey(ep, node)).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(recs))
	for k, rec := range recs {
		if f := strings.SplitN(rec, " ", 4); len(f) == 4 {
			out[k] = []byte(f[3])
		}
	}
	return out, nil
}

func (r *redisBalances) Reconcile(ctx context.Context, node string, stored func(context.Context, []string) (map[string]bool, error)) (int, error) {
	ep, err := r.epoch(ctx)
	if err != nil {
		return 0, err
	}
	jk := r.journalKey(ep, node)
	recs, err := r.rdb.HGetAll(ctx, jk).Result()
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		// Nothing pending: forget the node (a record it adds later, were
		// it alive after all, puts it back).
		return 0, r.rdb.SRem(ctx, r.journalSet(ep), node).Err()
	}
	keys := make([]string, 0, len(recs))
	for k := range recs {
		keys = append(keys, k)
	}
	have, err := stored(ctx, keys)
	if err != nil {
		return 0, err
	}
	undone := 0
	for k, rec := range recs {
		var userID, tokenID, delta int64
		f := strings.SplitN(rec, " ", 4)
		if len(f) >= 3 {
			userID, _ = strconv.ParseInt(f[0], 10, 64)
			tokenID, _ = strconv.ParseInt(f[1], 10, 64)
			delta, _ = strconv.ParseInt(f[2], 10, 64)
		}
		undo := !have[k] && len(f) >= 3
		n, err := undoScript.Run(ctx, r.rdb, []string{jk, r.userKey(ep, userID), r.tokenKey(ep, tokenID), r.epochKey()},
			k, b2s(undo), delta, b2s(tokenID != 0), ep).Int()
		if err != nil {
			return undone, err
		}
		if undo && n == 1 {
			undone++
		}
	}
	return undone, nil
}
