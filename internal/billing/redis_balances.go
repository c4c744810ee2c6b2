package billing

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// redisBalances keeps live balances in Redis so that several gateway nodes
// share them. Each balance is loaded from the database the first time any
// node needs it (SET NX, so the first loader wins) and changed only by the
// scripts below, which check and move user and key balances in one atomic
// step.
//
// Redis is a cache of the ledger and may forget everything at any moment
// (FLUSHALL, a restart without persistence, a failover to an empty
// replica). So every balance key is named after an epoch, a random value
// kept under one key, and every script first checks that the epoch it was
// given is still the one stored: a Redis that lost its data has none, and
// the very next script of every node answers rStale instead of moving a
// balance that is gone. A new epoch is only set once every live node has
// written its queued ledger entries to the database (see epoch.go), so a
// balance loaded in it reads a database that holds every move made before.
type redisBalances struct {
	rdb    redis.UniversalClient
	st     store.Store
	prefix string
	epoch  atomic.Pointer[string] // the epoch this node adopted; "" before the first
	// dirty is set when a move failed in a way that leaves unknown whether
	// Redis made it (or a forced move, whose ledger entry is written anyway,
	// could not be made): the balances are rebuilt once Redis answers.
	dirty atomic.Bool
	// onStale, set by the Service, rebuilds after Redis lost its data; reads
	// outside a move (User, Token) call it and try again.
	onStale func(context.Context) error
}

// NewRedisBalances returns multi-node balances in Redis backed by st.
func NewRedisBalances(rdb redis.UniversalClient, st store.Store) Balances {
	r := &redisBalances{rdb: rdb, st: st, prefix: RedisKeyPrefix(rdb) + "balance:"}
	r.epoch.Store(new(string))
	return r
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
	rStale      = -5
)

// errStaleEpoch: Redis no longer holds the epoch this node moves in, so
// the balances it would move are gone; the Service rebuilds and retries.
var errStaleEpoch = errors.New("billing: redis lost the live balances")

// epochCheck opens every script: KEYS[1] the epoch key, ARGV[1] the
// node's epoch.
const epochCheck = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -5 end
`

// takeScript: KEYS epoch, the user's three keys, the key's three keys
// (redis_legacy.go); ARGV epoch, amount, force (0/1), hasToken (0/1).
var takeScript = redis.NewScript(epochCheck + balanceLib + `
local u = bget(KEYS[2], KEYS[3], KEYS[4])
if not u then return -1 end
local amount = tonumber(ARGV[2])
local force = ARGV[3] == '1'
local t = false
if ARGV[4] == '1' then
  t = bget(KEYS[5], KEYS[6], KEYS[7])
  if not t then return -2 end
end
if not force and tonumber(u) < amount then return -3 end
if t and t ~= 'unlimited' and not force and tonumber(t) < amount then return -4 end
bmove(KEYS[2], KEYS[3], KEYS[4], u, -amount)
if t then bmove(KEYS[5], KEYS[6], KEYS[7], t, -amount) end
return 0
`)

// addScript: KEYS epoch, a balance's three keys; ARGV epoch, delta.
// Returns {1, new value}, {0, 0} when the balance is not loaded, or {-5, 0}
// when the epoch is stale; an unlimited key is left alone and reported as
// -1.
var addScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-5, 0} end
` + balanceLib + `
local v = bget(KEYS[2], KEYS[3], KEYS[4])
if not v then return {0, 0} end
v = bmove(KEYS[2], KEYS[3], KEYS[4], v, tonumber(ARGV[2]))
if v == 'unlimited' then return {1, -1} end
return {1, tonumber(v)}
`)

func (r *redisBalances) epochKey() string { return r.prefix + "epoch" }
func (r *redisBalances) cur() string {
	if e := r.epoch.Load(); e != nil {
		return *e
	}
	return ""
}
func (r *redisBalances) loadUser(ctx context.Context, e string, id int64) error {
	u, err := r.st.Users().Get(ctx, id)
	if err != nil {
		return storeUnavailable(err)
	}
	return redisUnavailable(r.rdb.SetNX(ctx, r.userKeys(e, id)[0], u.Quota, 0).Err())
}

func (r *redisBalances) loadTeam(ctx context.Context, e string, id int64) error {
	t, err := r.st.Teams().GetTeam(ctx, id)
	if err != nil {
		return storeUnavailable(err)
	}
	return redisUnavailable(r.rdb.SetNX(ctx, r.teamKeys(e, id)[0], t.Quota, 0).Err())
}

// payerKeys are the keys of p's balance: the team's or the user's. The
// scripts take either in the same place, so a call paid by its team is
// still one round trip.
func (r *redisBalances) payerKeys(e string, p Payer) []string {
	if p.team() {
		return r.teamKeys(e, p.TeamID)
	}
	return r.userKeys(e, p.UserID)
}

func (r *redisBalances) loadPayer(ctx context.Context, e string, p Payer) error {
	if p.team() {
		return r.loadTeam(ctx, e, p.TeamID)
	}
	return r.loadUser(ctx, e, p.UserID)
}

func (r *redisBalances) loadToken(ctx context.Context, e string, id int64) error {
	t, err := r.st.Tokens().Get(ctx, id)
	if err != nil {
		return storeUnavailable(err)
	}
	var v any = t.Quota
	if t.Quota == -1 { // an overdrawn limited key stays limited
		v = unlimitedMark
	}
	return redisUnavailable(r.rdb.SetNX(ctx, r.tokenKeys(e, id)[0], v, 0).Err())
}

func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (r *redisBalances) Take(ctx context.Context, p Payer, tokenID, amount int64, force bool) error {
	return r.runMove(ctx, p, tokenID, func(e string) (int, error) {
		keys := r.scriptKeys(r.payerKeys(e, p), r.tokenKeys(e, tokenID))
		return takeScript.Run(ctx, r.rdb, keys, e, amount, b2s(force), b2s(tokenID != 0)).Int()
	})
}

// runMove runs a balance script, loading a balance Redis does not hold yet
// from the database and trying again: the one retry rule of every move.
func (r *redisBalances) runMove(ctx context.Context, p Payer, tokenID int64, run func(e string) (int, error)) error {
	e := r.cur()
	for attempt := 0; attempt < 4; attempt++ {
		res, err := run(e)
		if err != nil {
			r.dirty.Store(true)
			return redisUnavailable(err)
		}
		switch res {
		case 0:
			return nil
		case rShortUser:
			return short(p)
		case rShortToken:
			return ErrInsufficientToken
		case rStale:
			if r.onStale != nil {
				return errStaleEpoch
			}
			e, err = r.adoptAlone(ctx)
		case rNoUser:
			err = r.loadPayer(ctx, e, p)
		case rNoToken:
			err = r.loadToken(ctx, e, tokenID)
		}
		if err != nil {
			return err
		}
	}
	return errors.New("billing: balance could not be loaded into redis")
}

func (r *redisBalances) Give(ctx context.Context, p Payer, tokenID, amount int64) error {
	add := func() (int64, error) { return r.AddUser(ctx, p.UserID, amount) }
	if p.team() {
		add = func() (int64, error) { return r.AddTeam(ctx, p.TeamID, amount) }
	}
	if _, err := add(); err != nil {
		return err
	}
	if tokenID == 0 {
		return nil
	}
	_, err := r.AddToken(ctx, tokenID, amount)
	return err
}

// add runs the add script, loading the balance first when it is missing.
func (r *redisBalances) add(ctx context.Context, keys func(e string) []string, delta int64, load func(e string) error) (int64, error) {
	e := r.cur()
	for attempt := 0; attempt < 4; attempt++ {
		res, err := addScript.Run(ctx, r.rdb, r.scriptKeys(keys(e)), e, delta).Int64Slice()
		if err != nil {
			if delta != 0 {
				r.dirty.Store(true)
			}
			return 0, redisUnavailable(err)
		}
		switch res[0] {
		case 1:
			return res[1], nil
		case rStale:
			if r.onStale != nil {
				return 0, errStaleEpoch
			}
			if e, err = r.adoptAlone(ctx); err != nil {
				return 0, err
			}
			continue
		}
		if err := load(e); err != nil {
			return 0, err
		}
	}
	return 0, errors.New("billing: balance could not be loaded into redis")
}

func (r *redisBalances) AddUser(ctx context.Context, userID, delta int64) (int64, error) {
	return r.add(ctx, func(e string) []string { return r.userKeys(e, userID) }, delta,
		func(e string) error { return r.loadUser(ctx, e, userID) })
}

func (r *redisBalances) AddTeam(ctx context.Context, teamID, delta int64) (int64, error) {
	return r.add(ctx, func(e string) []string { return r.teamKeys(e, teamID) }, delta,
		func(e string) error { return r.loadTeam(ctx, e, teamID) })
}

func (r *redisBalances) Team(ctx context.Context, teamID int64) (int64, error) {
	return r.read(ctx, func() (int64, error) { return r.AddTeam(ctx, teamID, 0) })
}

func (r *redisBalances) AddToken(ctx context.Context, tokenID, delta int64) (int64, error) {
	return r.add(ctx, func(e string) []string { return r.tokenKeys(e, tokenID) }, delta,
		func(e string) error { return r.loadToken(ctx, e, tokenID) })
}

// read runs a read outside any move, rebuilding once when Redis lost its
// data, so an operator never sees a balance that is not the ledger's.
func (r *redisBalances) read(ctx context.Context, f func() (int64, error)) (int64, error) {
	v, err := f()
	if errors.Is(err, errStaleEpoch) && r.onStale != nil {
		if err := r.onStale(ctx); err != nil {
			return 0, err
		}
		v, err = f()
	}
	if errors.Is(err, errStaleEpoch) {
		return 0, errRebuilding
	}
	return v, err
}

func (r *redisBalances) User(ctx context.Context, userID int64) (int64, error) {
	return r.read(ctx, func() (int64, error) { return r.AddUser(ctx, userID, 0) })
}

func (r *redisBalances) Token(ctx context.Context, tokenID int64) (int64, bool, error) {
	v, err := r.read(ctx, func() (int64, error) { return r.AddToken(ctx, tokenID, 0) })
	if err != nil {
		return 0, false, err
	}
	if v == -1 {
		v2, err := r.rdb.Get(ctx, r.tokenKeys(r.cur(), tokenID)[0]).Result()
		if err == nil && v2 == unlimitedMark {
			return -1, false, nil
		}
	}
	return v, true, nil
}

func (r *redisBalances) Forget(userID, tokenID int64) {
	ctx := context.Background()
	e := r.cur()
	if userID != 0 {
		r.rdb.Del(ctx, r.userKeys(e, userID)...)
	}
	if tokenID != 0 {
		r.rdb.Del(ctx, r.tokenKeys(e, tokenID)...)
	}
}

// Committed moves the balances Redis holds; a balance Redis does not hold
// is loaded from the database on first use, which already has the
// movement. The caller loads the balances first (loadFor): a balance some
// node loaded between the commit and this move would read the commit and
// be moved by it again, and right after a rebuild, when no balance is
// loaded yet, that is no rare race (a sweep releasing a dead node's holds
// moves them one round trip after another). A stale epoch moves nothing:
// the caller adopted an epoch before writing (Service.commit), and no
// balance of a later one is loaded before this node has acknowledged it
// (epoch.go), so that load reads this commit.
func (r *redisBalances) Committed(ctx context.Context, write func() ([]Move, error)) error {
	moves, err := write()
	if err != nil {
		return err
	}
	e := r.cur()
	for _, mv := range moves {
		if err := r.addLoaded(ctx, e, r.payerKeys(e, mv.payer()), mv.Delta); err != nil {
			return err
		}
		if mv.TokenID != 0 {
			if err := r.addLoaded(ctx, e, r.tokenKeys(e, mv.TokenID), mv.Delta); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadFor loads, in the epoch in force, every balance moves would move,
// before their commit (see Committed). Loads are SET NX, so a balance some
// other node loads meanwhile keeps the value read first, which predates
// the commit too. A load that fails leaves the outcome unknown: the
// balances are rebuilt from the ledger. A stale epoch loads nothing, and
// needs nothing (see Committed).
func (r *redisBalances) loadFor(ctx context.Context, moves []Move) {
	seen := make(map[string]bool, 2*len(moves))
	load := func(keys func(e string) []string, reload func(e string) error) {
		if k := keys(r.cur())[0]; !seen[k] {
			seen[k] = true
			if _, err := r.add(ctx, keys, 0, reload); err != nil && !errors.Is(err, errStaleEpoch) {
				r.dirty.Store(true)
			}
		}
	}
	for _, mv := range moves {
		if mv.Delta == 0 {
			continue
		}
		p, id := mv.payer(), mv.TokenID
		load(func(e string) []string { return r.payerKeys(e, p) }, func(e string) error { return r.loadPayer(ctx, e, p) })
		if id != 0 {
			load(func(e string) []string { return r.tokenKeys(e, id) }, func(e string) error { return r.loadToken(ctx, e, id) })
		}
	}
}

// addLoaded adds delta to a balance Redis holds and leaves a missing one
// (or one of a lost epoch) missing.
func (r *redisBalances) addLoaded(ctx context.Context, e string, keys []string, delta int64) error {
	err := addScript.Run(ctx, r.rdb, r.scriptKeys(keys), e, delta).Err()
	if err != nil {
		r.dirty.Store(true)
	}
	return redisUnavailable(err)
}
