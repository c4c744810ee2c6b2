package billing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Rebuilding the live balances after Redis lost them (see redisBalances).
//
// A node that meets a stale epoch (or finds the epoch key gone while
// watching) stops moving balances, writes every ledger entry it has queued
// to the database, and acknowledges in Redis. The first node to see every
// live node (an unexpired lease in the database) acknowledged sets a new
// epoch, and every node adopts it; a node whose lease had lapsed is not
// waited for, and has the epoch set again once it wrote its queue (see
// acknowledge). Balances of the new epoch are loaded on
// first use from the database, which by then holds every move made before
// the loss: a hold reserved before the loss is in the database's balance
// (its reserve entry) and its settle, made after, moves the new balance and
// reaches the database as usual, so it is counted once. The same rebuild
// is forced after a move that Redis may or may not have made (a timeout, a
// connection lost mid-script): the database decides again.
//
// A node that holds a live lease but does not answer (it died without
// ending its lease) delays the new epoch until its lease lapses; calls meet
// a 503 meanwhile rather than a balance that may miss its queued entries.

// rebuildWait bounds how long a call waits for a rebuild before a 503.
const rebuildWait = 2 * time.Second

// epochWatch is how often a node checks the epoch when it moves nothing.
const epochWatch = 100 * time.Millisecond

// LiveLeases is implemented by stores that can list the nodes whose lease
// has not ended.
type LiveLeases interface {
	LiveNodes(ctx context.Context, now time.Time) ([]string, error)
}

// establishScript: KEYS epoch, acknowledgements; ARGV the new epoch, then
// the live nodes. It sets the epoch when none is set and every live node
// acknowledged, and returns the epoch in force, or nil when it must wait.
var establishScript = redis.NewScript(`
local e = redis.call('GET', KEYS[1])
if e then return e end
for i = 2, #ARGV do
  if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 0 then return false end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return ARGV[1]
`)

// dropScript: KEYS epoch; ARGV epoch. Ends the epoch if it is still the
// given one, so every node rebuilds.
var dropScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`)

func (r *redisBalances) acksKey() string { return r.prefix + "acks" }

// stored is the epoch Redis holds, "" when it holds none.
func (r *redisBalances) stored(ctx context.Context) (string, error) {
	e, err := r.rdb.Get(ctx, r.epochKey()).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return e, err
}

// adoptAlone serves balances used without a Service (tools, tests): no
// writer queues entries here, so there is nothing to flush or wait for.
func (r *redisBalances) adoptAlone(ctx context.Context) (string, error) {
	e, err := establishScript.Run(ctx, r.rdb, []string{r.epochKey(), r.acksKey()}, newEpoch()).Text()
	if err != nil {
		return "", redisUnavailable(err)
	}
	r.epoch.Store(&e)
	return e, nil
}

func newEpoch() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// rebuild is one rebuild in progress; concurrent callers wait for it.
type rebuild struct {
	done chan struct{}
	err  error
}

// resync rebuilds after Redis lost the live balances (see above). Callers
// that arrive while one runs wait for it, at most until their ctx ends.
func (s *Service) resync(ctx context.Context) error {
	r, ok := s.balances.(*redisBalances)
	if !ok {
		return nil
	}
	s.rbMu.Lock()
	if rb := s.rb; rb != nil {
		s.rbMu.Unlock()
		select {
		case <-rb.done:
			return rb.err
		case <-ctx.Done():
			return errRebuilding
		}
	}
	rb := &rebuild{done: make(chan struct{})}
	s.rb = rb
	s.rbMu.Unlock()
	rb.err = s.rebuildOnce(r)
	s.rbMu.Lock()
	s.rb = nil
	s.rbMu.Unlock()
	close(rb.done)
	return rb.err
}

func (s *Service) rebuildOnce(r *redisBalances) error {
	ctx, cancel := context.WithTimeout(context.Background(), rebuildWait)
	defer cancel()
	old := r.cur()
	if r.dirty.Load() && old != "" {
		if err := dropScript.Run(ctx, r.rdb, []string{r.epochKey()}, old).Err(); err != nil {
			return redisUnavailable(err)
		}
	}
	if e, err := r.stored(ctx); err != nil {
		return redisUnavailable(err)
	} else if e != "" && e == old {
		return nil
	}
	// No move of this node may run between its flush and the new epoch:
	// its ledger entry could reach the database after a balance was loaded.
	s.moves.Lock()
	defer s.moves.Unlock()
	if s.writer != nil {
		if err := s.writer.Flush(ctx); err != nil {
			return errRebuilding
		}
	}
	e, err := s.acknowledge(ctx, r, old)
	if err != nil {
		return err
	}
	r.epoch.Store(&e)
	r.dirty.Store(false)
	if old != "" && old != e {
		s.writer.log.Warn("redis lost the live balances or a move's outcome; rebuilt from the ledger",
			"node", s.node, "epoch", e)
		go r.dropEpoch(old)
	}
	return nil
}

// acknowledge says in Redis that this node has written its queue, and
// returns the epoch set once every live node did. The acknowledgement is
// withdrawn before this node moves again, whatever happened: one left
// behind would count at the next rebuild, which could then set its epoch
// before this node wrote what it queued meanwhile (a node that adopts an
// epoch someone else set acknowledges too late to be counted, and every
// node joining a running cluster does).
//
// Setting an epoch removes the acknowledgements it counted, so one still
// there was not counted: the epoch was set without waiting for this node,
// because its lease had lapsed (it was taken for dead while it ran), and
// balances loaded in it may miss the entries this node has just written.
// Such an epoch is ended and another one set, acknowledged by this node
// before the end so that it is counted. A node that never moved (old "")
// has written nothing and adopts the epoch as it is.
func (s *Service) acknowledge(ctx context.Context, r *redisBalances, old string) (string, error) {
	if err := r.rdb.SAdd(ctx, r.acksKey(), s.node).Err(); err != nil {
		return "", redisUnavailable(err)
	}
	for {
		e, err := s.awaitEpoch(ctx, r)
		left, rerr := r.rdb.SRem(context.Background(), r.acksKey(), s.node).Result()
		switch {
		case err != nil:
			return "", err
		case rerr != nil:
			return "", redisUnavailable(rerr)
		case left == 0 || old == "":
			return e, nil
		}
		s.writer.log.Warn("the live balances were rebuilt without waiting for this node (its lease had lapsed); rebuilding them again",
			"node", s.node, "epoch", e)
		if err := r.rdb.SAdd(ctx, r.acksKey(), s.node).Err(); err != nil {
			return "", redisUnavailable(err)
		}
		if err := dropScript.Run(ctx, r.rdb, []string{r.epochKey()}, e).Err(); err != nil {
			_ = r.rdb.SRem(context.Background(), r.acksKey(), s.node).Err()
			return "", redisUnavailable(err)
		}
		go r.dropEpoch(e)
	}
}

// awaitEpoch waits until an epoch is set, setting it itself once every
// live node has acknowledged.
func (s *Service) awaitEpoch(ctx context.Context, r *redisBalances) (string, error) {
	candidate := newEpoch()
	for {
		live, err := s.liveNodes(ctx)
		if err != nil {
			return "", errRebuilding
		}
		args := append([]any{candidate}, live...)
		e, err := establishScript.Run(ctx, r.rdb, []string{r.epochKey(), r.acksKey()}, args...).Text()
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, redis.Nil) {
			return "", redisUnavailable(err)
		}
		select {
		case <-ctx.Done():
			return "", errRebuilding
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// liveNodes are the nodes that must acknowledge a new epoch: those whose
// lease has not ended, and this one.
func (s *Service) liveNodes(ctx context.Context) ([]any, error) {
	out := []any{s.node}
	ll, ok := s.writer.st.(LiveLeases)
	if !ok {
		return out, nil
	}
	now, err := s.now(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := ll.LiveNodes(ctx, now)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n != s.node {
			out = append(out, n)
		}
	}
	return out, nil
}

// dropEpoch deletes what is left of an ended epoch (after a failover or a
// forced rebuild Redis still holds it); nothing reads it any more.
func (r *redisBalances) dropEpoch(old string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iter := r.rdb.Scan(ctx, 0, r.prefix+old+":*", 500).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			r.rdb.Unlink(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		r.rdb.Unlink(ctx, batch...)
	}
}

// watchEpoch rebuilds as soon as Redis lost its data or a move's outcome
// is unknown, also on a node that moves nothing: every live node's
// acknowledgement is needed for the new epoch.
func (s *Service) watchEpoch(ctx context.Context) {
	r, ok := s.balances.(*redisBalances)
	if !ok {
		return
	}
	t := time.NewTicker(epochWatch)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e, err := r.stored(ctx)
		if err != nil || (e != "" && e == r.cur() && !r.dirty.Load()) {
			continue
		}
		if err := s.resync(ctx); err != nil && ctx.Err() == nil {
			s.writer.log.Debug("live balance rebuild waiting", "err", err)
		}
	}
}
