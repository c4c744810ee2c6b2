package billing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis may forget everything at any moment (FLUSHALL, a restart without
// persistence, a failover to an empty replica), and a balance it forgot
// must not be reloaded from a database that has not yet received the
// moves made against the lost copy: the reloaded balance would then miss
// them for good, which is money invented. So the live balances belong to
// an epoch. Every balance and journal key carries the epoch's id in its
// name, and every script first checks that the epoch key still names that
// id; a flush removes the epoch key with the rest, so the very next script
// on any node sees the loss.
//
// The node that sees the epoch gone makes a new one together with a
// rebuild gate: a key that expires after the rebuild pause. No balance is
// loaded from the database while the gate stands, so every move made
// against the lost epoch has time to reach the ledger (the writers store a
// batch every 100 ms) before the balances are read from it again. Calls
// that need a balance in that window wait for the gate, up to the wait
// bound, and are then refused with 503 redis_unavailable: never admitted
// against a balance that is missing or stale.
//
// A node whose script failed halfway (Redis went away, a timeout after
// the script may have run) does not know whether the move happened, and
// the ledger entry it writes anyway may disagree with Redis. It marks the
// epoch dirty and, as soon as Redis answers again, ends that epoch itself,
// so every balance is rebuilt from the ledger in the same way.

// Defaults of the rebuild: the pause must cover a writer's interval and
// a batch write with room to spare; the wait lets a call ride out the
// pause instead of failing it.
const (
	defaultRebuildPause = time.Second
	defaultRebuildWait  = 2 * time.Second
)

// errRebuilding refuses a call that needed a balance while the balances
// were being rebuilt (or Redis could not say which epoch is current).
var errRebuilding = errors.New("billing: live balances are being rebuilt from the ledger")

// Script results shared by every epoch-checked script.
const (
	rLostEpoch = -5
	rGated     = -6
)

// epochScript: KEYS epoch, gate; ARGV new id, pause (ms). It returns the
// current epoch and the gate's remaining time (ms, <= 0 when open),
// making a new epoch behind a fresh gate when none exists.
var epochScript = redis.NewScript(`
local e = redis.call('GET', KEYS[1])
if not e then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  redis.call('SET', KEYS[1], ARGV[1])
  e = ARGV[1]
end
return {e, redis.call('PTTL', KEYS[2])}
`)

// endEpochScript: KEYS epoch; ARGV id. It ends the epoch id if it is still
// the current one.
var endEpochScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// loadScript: KEYS balance, epoch, gate; ARGV epoch id, value. It stores a
// balance read from the database, unless one is there already, the epoch
// changed, or the gate stands.
var loadScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -5 end
if redis.call('EXISTS', KEYS[3]) == 1 then return -6 end
redis.call('SET', KEYS[1], ARGV[2], 'NX')
return 0
`)

// epochState is a node's view of the current epoch.
type epochState struct {
	mu    sync.Mutex
	id    string
	dirty string // an epoch a failed script may have left unequal to the ledger
	pause time.Duration
	wait  time.Duration
}

func newEpochID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (r *redisBalances) epochKey() string { return r.root + "epoch" }
func (r *redisBalances) gateKey() string  { return r.root + "rebuilding" }

// current is the epoch this node believes in ("" before the first look).
func (r *redisBalances) current() string {
	r.ep.mu.Lock()
	defer r.ep.mu.Unlock()
	return r.ep.id
}

// epoch returns the epoch to use for a script, first ending a dirty one.
func (r *redisBalances) epoch(ctx context.Context) (string, error) {
	r.ep.mu.Lock()
	id, dirty := r.ep.id, r.ep.dirty
	r.ep.mu.Unlock()
	if dirty != "" {
		if err := r.Heal(ctx); err != nil {
			return "", err
		}
		id = ""
	}
	if id != "" {
		return id, nil
	}
	id, _, err := r.look(ctx)
	return id, err
}

// look asks Redis for the current epoch (making one when it is gone) and
// how long its gate still stands.
func (r *redisBalances) look(ctx context.Context) (string, time.Duration, error) {
	res, err := epochScript.Run(ctx, r.rdb, []string{r.epochKey(), r.gateKey()}, newEpochID(), r.ep.pause.Milliseconds()).Slice()
	if err != nil {
		return "", 0, err
	}
	if len(res) != 2 {
		return "", 0, errors.New("billing: unexpected epoch script answer")
	}
	id, _ := res[0].(string)
	ttl, _ := res[1].(int64)
	r.ep.mu.Lock()
	old := r.ep.id
	r.ep.id = id
	r.ep.mu.Unlock()
	if old != "" && old != id {
		r.log().Warn("redis lost the live balances (or they were declared stale); rebuilding them from the ledger",
			"old_epoch", old, "epoch", id, "pause", r.ep.pause)
		go r.dropEpoch(old)
	}
	return id, time.Duration(ttl) * time.Millisecond, nil
}

// ready waits until the current epoch's gate is open, up to the wait
// bound, and returns the epoch.
func (r *redisBalances) ready(ctx context.Context) (string, error) {
	deadline := time.Now().Add(r.ep.wait)
	for {
		id, gate, err := r.look(ctx)
		if err != nil {
			return "", err
		}
		if gate <= 0 {
			return id, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return "", errRebuilding
		}
		t := time.NewTimer(min(gate, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// markDirty records that a script on epoch id failed without a clear
// answer; the epoch is ended as soon as Redis answers (see Heal).
func (r *redisBalances) markDirty(id string, err error) {
	if id == "" || errors.Is(err, context.Canceled) {
		return
	}
	r.ep.mu.Lock()
	if r.ep.dirty == "" {
		r.log().Warn("a live balance move failed in redis; its epoch will be rebuilt from the ledger", "epoch", id, "err", err)
	}
	r.ep.dirty = id
	r.ep.mu.Unlock()
}

// Heal ends an epoch this node marked dirty, once Redis answers again, so
// that every node rebuilds the live balances from the ledger. It is called
// before every script and once a second by the lease loop, so the repair
// does not wait for traffic.
func (r *redisBalances) Heal(ctx context.Context) error {
	r.ep.mu.Lock()
	dirty := r.ep.dirty
	r.ep.mu.Unlock()
	if dirty == "" {
		return nil
	}
	if err := endEpochScript.Run(ctx, r.rdb, []string{r.epochKey()}, dirty).Err(); err != nil {
		return err
	}
	r.ep.mu.Lock()
	if r.ep.dirty == dirty {
		r.ep.dirty = ""
	}
	if r.ep.id == dirty {
		r.ep.id = ""
	}
	r.ep.mu.Unlock()
	return nil
}

// dropEpoch deletes the keys of an epoch that ended (they are never read
// again), in the background: only after a loss that kept them.
func (r *redisBalances) dropEpoch(old string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	match := r.root + "balance:" + old + ":*"
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, match, 512).Iterator()
		var batch []string
		for it.Next(ctx) {
			batch = append(batch, it.Val())
			if len(batch) == 512 {
				c.Unlink(ctx, batch...)
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			c.Unlink(ctx, batch...)
		}
		return it.Err()
	}
	var err error
	switch c := r.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	}
	if err != nil {
		r.log().Warn("keys of an ended balance epoch not all deleted", "epoch", old, "err", err)
	}
}
