package billing

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// redisBalances keeps live balances in Redis so that several gateway nodes
// share them. Each balance is loaded from the database the first time any
// node needs it (SET NX, so the first loader wins) and changed only by the
// scripts below, which check and move user and key balances in one atomic
// step.
type redisBalances struct {
	rdb    redis.UniversalClient
	st     store.Store
	prefix string
}

// NewRedisBalances returns multi-node balances in Redis backed by st.
func NewRedisBalances(rdb redis.UniversalClient, st store.Store) Balances {
	return &redisBalances{rdb: rdb, st: st, prefix: RedisKeyPrefix(rdb) + "balance:"}
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

// Results of the take script besides 0 (done).
const (
	rNoUser     = -1
	rNoToken    = -2
	rShortUser  = -3
	rShortToken = -4
)

// takeScript: KEYS user, token; ARGV amount, force (0/1), hasToken (0/1).
var takeScript = redis.NewScript(`
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

// addScript: KEYS key; ARGV delta. Returns the new value, or nil when the
// key is not loaded; an unlimited key is left alone and reported as -1.
var addScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return nil end
if v == 'unlimited' then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`)

func (r *redisBalances) userKey(id int64) string  { return r.prefix + "u:" + strconv.FormatInt(id, 10) }
func (r *redisBalances) tokenKey(id int64) string { return r.prefix + "t:" + strconv.FormatInt(id, 10) }

func (r *redisBalances) loadUser(ctx context.Context, id int64) error {
	u, err := r.st.Users().Get(ctx, id)
	if err != nil {
		return err
	}
	return r.rdb.SetNX(ctx, r.userKey(id), u.Quota, 0).Err()
}

func (r *redisBalances) loadToken(ctx context.Context, id int64) error {
	t, err := r.st.Tokens().Get(ctx, id)
	if err != nil {
		return err
	}
	var v any = t.Quota
	if t.Quota == -1 { // an overdrawn limited key stays limited
		v = unlimitedMark
	}
	return r.rdb.SetNX(ctx, r.tokenKey(id), v, 0).Err()
}

func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (r *redisBalances) Take(ctx context.Context, userID, tokenID, amount int64, force bool) error {
	keys := []string{r.userKey(userID), r.tokenKey(tokenID)}
	return r.runMove(ctx, userID, tokenID, func() (int, error) {
		return takeScript.Run(ctx, r.rdb, keys, amount, b2s(force), b2s(tokenID != 0)).Int()
	})
}

// runMove runs a balance script, loading a balance Redis does not hold yet
// from the database and trying again: the one retry rule of every move.
func (r *redisBalances) runMove(ctx context.Context, userID, tokenID int64, run func() (int, error)) error {
	for attempt := 0; attempt < 3; attempt++ {
		res, err := run()
		if err != nil {
			return err
		}
		switch res {
		case 0:
			return nil
		case rShortUser:
			return ErrInsufficientUser
		case rShortToken:
			return ErrInsufficientToken
		case rNoUser:
			err = r.loadUser(ctx, userID)
		case rNoToken:
			err = r.loadToken(ctx, tokenID)
		}
		if err != nil {
			return err
		}
	}
	return errors.New("billing: balance could not be loaded into redis")
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

// add runs the add script, loading the balance first when it is missing.
func (r *redisBalances) add(ctx context.Context, key string, delta int64, load func() error) (int64, error) {
	for attempt := 0; attempt < 3; attempt++ {
		v, err := addScript.Run(ctx, r.rdb, []string{key}, delta).Int64()
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, redis.Nil) {
			return 0, err
		}
		if err := load(); err != nil {
			return 0, err
		}
	}
	return 0, errors.New("billing: balance could not be loaded into redis")
}

func (r *redisBalances) AddUser(ctx context.Context, userID, delta int64) (int64, error) {
	return r.add(ctx, r.userKey(userID), delta, func() error { return r.loadUser(ctx, userID) })
}

func (r *redisBalances) AddToken(ctx context.Context, tokenID, delta int64) (int64, error) {
	return r.add(ctx, r.tokenKey(tokenID), delta, func() error { return r.loadToken(ctx, tokenID) })
}

func (r *redisBalances) User(ctx context.Context, userID int64) (int64, error) {
	return r.AddUser(ctx, userID, 0)
}

func (r *redisBalances) Token(ctx context.Context, tokenID int64) (int64, bool, error) {
	v, err := r.AddToken(ctx, tokenID, 0)
	if err != nil {
		return 0, false, err
	}
	v2, err := r.rdb.Get(ctx, r.tokenKey(tokenID)).Result()
	if err == nil && v2 == unlimitedMark {
		return -1, false, nil
	}
	return v, true, err
}

func (r *redisBalances) Forget(userID, tokenID int64) {
	ctx := context.Background()
	if userID != 0 {
		r.rdb.Del(ctx, r.userKey(userID))
	}
	if tokenID != 0 {
		r.rdb.Del(ctx, r.tokenKey(tokenID))
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
		if err := r.addLoaded(ctx, r.userKey(mv.UserID), mv.Delta); err != nil {
			return err
		}
		if mv.TokenID != 0 {
			if err := r.addLoaded(ctx, r.tokenKey(mv.TokenID), mv.Delta); err != nil {
				return err
			}
		}
	}
	return nil
}

// addLoaded adds delta to a balance Redis holds and leaves a missing one
// missing (the add script answers nil for it).
func (r *redisBalances) addLoaded(ctx context.Context, key string, delta int64) error {
	err := addScript.Run(ctx, r.rdb, []string{key}, delta).Err()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// moveScript: KEYS user, token, journal, journal set; ARGV delta, force
// (0/1), hasToken (0/1), entry key, journal record, node. It moves the user
// and (limited) key by delta and records the move in the node's journal,
// all or nothing; results as takeScript's.
var moveScript = redis.NewScript(`
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

// undoScript: KEYS journal, user, token; ARGV entry key, undo (0/1),
// delta, hasToken (0/1). It removes the journal record and, when asked and
// the record was still there, takes its move back from the balances Redis
// holds (a balance not loaded reads the database, which never had the
// move). Returns 1 when it removed the record.
var undoScript = redis.NewScript(`
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

func (r *redisBalances) journalKey(node string) string { return r.prefix + "journal:" + node }
func (r *redisBalances) journalSet() string            { return r.prefix + "journals" }

func (r *redisBalances) MoveFor(ctx context.Context, node, entryKey string, userID, tokenID, delta int64, force bool) error {
	keys := []string{r.userKey(userID), r.tokenKey(tokenID), r.journalKey(node), r.journalSet()}
	record := strconv.FormatInt(userID, 10) + " " + strconv.FormatInt(tokenID, 10) + " " + strconv.FormatInt(delta, 10)
	return r.runMove(ctx, userID, tokenID, func() (int, error) {
		return moveScript.Run(ctx, r.rdb, keys, delta, b2s(force), b2s(tokenID != 0), entryKey, record, node).Int()
	})
}

func (r *redisBalances) Written(ctx context.Context, node string, entryKeys []string) error {
	return r.rdb.HDel(ctx, r.journalKey(node), entryKeys...).Err()
}

func (r *redisBalances) Nodes(ctx context.Context) ([]string, error) {
	return r.rdb.SMembers(ctx, r.journalSet()).Result()
}

func (r *redisBalances) Reconcile(ctx context.Context, node string, stored func(context.Context, []string) (map[string]bool, error)) (int, error) {
	jk := r.journalKey(node)
	recs, err := r.rdb.HGetAll(ctx, jk).Result()
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		// Nothing pending: forget the node (a record it adds later, were
		// it alive after all, puts it back).
		return 0, r.rdb.SRem(ctx, r.journalSet(), node).Err()
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
		f := strings.Fields(rec)
		if len(f) == 3 {
			userID, _ = strconv.ParseInt(f[0], 10, 64)
			tokenID, _ = strconv.ParseInt(f[1], 10, 64)
			delta, _ = strconv.ParseInt(f[2], 10, 64)
		}
		undo := !have[k] && len(f) == 3
		n, err := undoScript.Run(ctx, r.rdb, []string{jk, r.userKey(userID), r.tokenKey(tokenID)},
			k, b2s(undo), delta, b2s(tokenID != 0)).Int()
		if err != nil {
			return undone, err
		}
		if undo && n == 1 {
			undone++
		}
	}
	return undone, nil
}
