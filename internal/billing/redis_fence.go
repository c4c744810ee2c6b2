package billing

import (
	"context"
	"time"
)

// A node can be taken for dead while it runs: its lease lapses when it
// stalls (a starved CPU, a database that answers slowly) for longer than
// the lease. Another node's sweep then reconciles its journal, undoing in
// Redis the moves whose ledger entries are not stored yet — entries the
// stalled node is about to write — and releases its stored holds. The
// database stays exact either way (a late end finds its hold ended and is
// refused); the live balances are brought back to it from both sides:
//
//   - the sweeper leaves a fence mark for the node when it undid any of its
//     moves; the node finds the mark when it next renews its lease and
//     rebuilds the live balances from the ledger (every node writes its
//     queue first), which by then holds the entries whose moves were undone;
//   - an end refused because its hold was released takes its own live move
//     back (Service.takeBackRefused), also after such a rebuild.

// fenceTTL bounds how long a fence mark waits for its node: the mark of a
// node that really died is never read.
const fenceTTL = 24 * time.Hour

func (r *redisBalances) fenceKey(node string) string { return r.prefix + "fenced:" + node }

// fence marks node as taken for dead.
func (r *redisBalances) fence(ctx context.Context, node string) error {
	return r.rdb.Set(ctx, r.fenceKey(node), "1", fenceTTL).Err()
}

// takeFence reports, once, whether node was marked.
func (r *redisBalances) takeFence(ctx context.Context, node string) (bool, error) {
	n, err := r.rdb.Del(ctx, r.fenceKey(node)).Result()
	return n > 0, err
}

// settleOwn settles this node's journal records of keys: undone when their
// entries are not stored, dropped when they are (see settleRecords). A
// key without a record (a move of nothing, or a sweeper took it) is left.
func (r *redisBalances) settleOwn(ctx context.Context, node string, keys []string,
	stored func(context.Context, []string) (map[string]bool, error)) (int, error) {
	have, err := stored(ctx, keys)
	if err != nil {
		return 0, err
	}
	e := r.cur()
	undone := 0
	for _, j := range r.journals(e, node) {
		vals, err := r.rdb.HMGet(ctx, j.hash, keys...).Result()
		if err != nil {
			return undone, err
		}
		recs := make(map[string]journalRecord, len(keys))
		for i, v := range vals {
			if rec, ok := v.(string); ok {
				recs[keys[i]] = parseRecord(rec)
			}
		}
		n, err := r.settleRecords(ctx, e, j.hash, recs, have)
		undone += n
		if err != nil {
			return undone, err
		}
	}
	return undone, nil
}

// checkFence rebuilds the live balances (through the epoch watcher) when
// another node's sweep took this node for dead and undid its moves.
func (s *Service) checkFence(ctx context.Context) {
	r, ok := s.balances.(*redisBalances)
	if !ok {
		return
	}
	fenced, err := r.takeFence(ctx, s.node)
	if err != nil || !fenced {
		return
	}
	s.writer.log.Warn("another node took this one for dead (its lease lapsed) and gave back its pending live moves; "+
		"rebuilding the live balances from the ledger", "node", s.node)
	r.dirty.Store(true)
}
