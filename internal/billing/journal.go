package billing

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Journal is implemented by live balances shared between processes
// (Redis). A node moves a shared balance before the ledger entry of the
// move reaches the database; if the node dies in between, the database
// never learns of the move, and nothing would give it back in the shared
// balance. So each move made for a ledger entry is recorded, in the same
// atomic step, in the node's journal under the entry's key, and removed
// once the writer has stored the batch holding the entry. The sweep of any
// node reconciles the journal of a node whose lease has lapsed: a move
// whose entry is in the database stays (the database's hold and its
// sweep take it from there); a move whose entry is not is undone. Both
// sides then agree to the unit:
//
//   - reserve lost: the reserve (and any settle or refund after it) is
//     undone in Redis; the database never had it;
//   - reserve stored, end lost: the database sweep refunds the open hold
//     (and moves Redis with it), and the journal undoes the lost end's move;
//   - both stored: the journal entries are simply dropped.
type Journal interface {
	// MoveFor moves the payer's and (limited) key's balance by delta for the
	// ledger entry entryKey and records it in node's journal, atomically.
	// A negative delta without force fails when it does not fit.
	MoveFor(ctx context.Context, node, entryKey string, p Payer, tokenID, delta int64, force bool) error
	// Written drops journal records whose entries the database has taken.
	Written(ctx context.Context, node string, entryKeys []string) error
	// Nodes lists the nodes that have journal records.
	Nodes(ctx context.Context) ([]string, error)
	// Reconcile undoes node's journaled moves whose entries stored reports
	// missing from the database, drops the others, and reports how many it
	// undid. Each record is undone at most once, also by concurrent calls.
	Reconcile(ctx context.Context, node string, stored func(ctx context.Context, keys []string) (map[string]bool, error)) (int, error)
}

// LedgerKinds is implemented by stores that can say which ledger entries
// exist (by idempotency key) and of what kind.
type LedgerKinds interface {
	EntryKinds(ctx context.Context, keys []string) (map[string]string, error)
}

// LeaseChecker is implemented by stores that keep node leases and a clock.
type LeaseChecker interface {
	// LeaseLapsed reports whether node's lease ended before now, or it has none.
	LeaseLapsed(ctx context.Context, node string, now time.Time) (bool, error)
}

// DBClock is implemented by stores that read the database server's clock.
// Lease times are taken from it, so nodes whose clocks disagree still agree
// on whose lease has lapsed.
type DBClock interface {
	DBNow(ctx context.Context) (time.Time, error)
}

// now is the lease clock: the database's when the store has one.
func (s *Service) now(ctx context.Context) (time.Time, error) {
	if c, ok := s.writer.st.(DBClock); ok {
		return c.DBNow(ctx)
	}
	return time.Now(), nil
}

// moveForItem is moveFor whose journal record carries the item that will
// store the move, so a sweep after this node died writes it (a settle: the
// call was answered).
func (s *Service) moveForItem(ctx context.Context, acct Account, entryKey string, delta int64, force bool, it *store.BillingItem) error {
	if r, ok := s.balances.(*redisBalances); ok {
		return r.moveRecorded(ctx, s.node, entryKey, acct.Payer(), acct.TokenID, delta, force, it)
	}
	return s.moveFor(ctx, acct, entryKey, delta, force)
}

// moveFor moves the live balance by delta for the ledger entry entryKey:
// journaled when the balances are shared, as before otherwise.
func (s *Service) moveFor(ctx context.Context, acct Account, entryKey string, delta int64, force bool) error {
	if delta == 0 {
		return nil
	}
	if j, ok := s.balances.(Journal); ok {
		return j.MoveFor(ctx, s.node, entryKey, acct.Payer(), acct.TokenID, delta, force)
	}
	if delta < 0 {
		return s.balances.Take(ctx, acct.Payer(), acct.TokenID, -delta, force)
	}
	return s.balances.Give(ctx, acct.Payer(), acct.TokenID, delta)
}

// written is the writer's hook after a stored batch: the batch's entries
// leave this node's journal. An end the database refused (ok false: its
// hold had ended already) is settled against the journal instead, see
// takeBackRefused. ok nil means every item was taken.
func (s *Service) written(batch []store.BillingItem, ok []bool) {
	j, isJournal := s.balances.(Journal)
	if !isJournal {
		return
	}
	keys := make([]string, 0, len(batch))
	var refused []string
	for i, it := range batch {
		switch {
		case it.Entry == nil:
		case ok != nil && !ok[i] && it.Close != "":
			refused = append(refused, it.Entry.Key)
		default:
			keys = append(keys, it.Entry.Key)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if len(refused) > 0 {
		s.takeBackRefused(ctx, refused)
	}
	if len(keys) == 0 {
		return
	}
	if err := j.Written(ctx, s.node, keys); err != nil {
		// Harmless for the books: a record left behind is found stored
		// and dropped when this node's journal is reconciled.
		s.writer.log.Warn("billing journal not trimmed", "entries", len(keys), "err", err)
	}
}

// takeBackRefused handles ends the database refused because their hold
// had ended before them: another node took this one for dead (its lease
// lapsed while it stalled) and its sweep released the hold, moving the
// live balance back itself. The end's own live move, made when the call
// ended, then counts the hold twice, so it is undone — unless the entry is
// stored after all (a sweep wrote this very settle from the journal, or an
// earlier attempt at the batch did), in which case the move stands.
func (s *Service) takeBackRefused(ctx context.Context, keys []string) {
	r, ok := s.balances.(*redisBalances)
	lk, ok2 := s.writer.st.(LedgerKinds)
	if !ok || !ok2 {
		return
	}
	stored := func(ctx context.Context, keys []string) (map[string]bool, error) { return storedEntries(ctx, lk, keys) }
	n, err := r.settleOwn(ctx, s.node, keys, stored)
	if n > 0 {
		s.writer.log.Warn("billing took back the live moves of ends refused because another node had released their holds",
			"moves", n, "node", s.node)
	}
	if err != nil && !errors.Is(err, errStaleEpoch) { // a stale epoch is being rebuilt from the ledger already
		s.writer.log.Warn("billing could not settle refused ends against the journal; a rebuild will", "err", err)
		r.dirty.Store(true)
	}
}

// reconcileJournals reconciles the journals of nodes whose lease lapsed.
func (s *Service) reconcileJournals(ctx context.Context, now time.Time) (int, error) {
	j, ok := s.balances.(Journal)
	if !ok {
		return 0, nil
	}
	lc, ok1 := s.writer.st.(LeaseChecker)
	lk, ok2 := s.writer.st.(LedgerKinds)
	if !ok1 || !ok2 {
		return 0, nil
	}
	nodes, err := j.Nodes(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, node := range nodes {
		if node == s.node {
			continue
		}
		lapsed, err := lc.LeaseLapsed(ctx, node, now)
		if err != nil {
			return total, err
		}
		if !lapsed {
			continue
		}
		storedFn := func(ctx context.Context, keys []string) (map[string]bool, error) { return storedEntries(ctx, lk, keys) }
		var n int
		if r, ok := j.(*redisBalances); ok {
			n, err = r.reconcile(ctx, node, storedFn, s.writeAnswered)
		} else {
			n, err = j.Reconcile(ctx, node, storedFn)
		}
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// writeAnswered stores the items of calls a dead node answered but never
// wrote, from its journal of epoch e (see redisBalances.reconcile). The
// live moves were made in e when the node settled, so nothing moves here
// while e is this node's epoch; s.moves keeps it so until the write is
// stored, so the next epoch, which needs this node's acknowledgement, loads
// balances that hold it. Once this node has left e, balances of the epoch
// in force may have been loaded without the items, so they are committed
// with their moves like a sweep's release.
func (s *Service) writeAnswered(ctx context.Context, e string, items []store.BillingItem) ([]bool, error) {
	bw, ok := s.writer.st.(store.BatchWriter)
	if !ok {
		return nil, errNoBatchWriter
	}
	s.moves.RLock()
	if r, ok := s.balances.(*redisBalances); !ok || r.cur() == e {
		defer s.moves.RUnlock()
		return bw.WriteItems(ctx, items)
	}
	s.moves.RUnlock()
	moves := make([]Move, len(items))
	for i, it := range items {
		if en := it.Entry; en != nil {
			moves[i] = Move{UserID: en.UserID, TokenID: en.TokenID, Delta: en.Delta, TeamID: en.TeamID}
		}
	}
	return s.commit(ctx, items, moves)
}

// storedEntries says which journaled entries the database holds. A hold
// reserved and ended in one batch is stored as one net entry under the
// reserve's key with the end's kind, so an end (<hold>:settle or
// <hold>:refund) counts as stored when that net entry is there. The sweep's
// release of a hold has a key of its own (<hold>:release), so it is never
// mistaken for the owner's refund.
func storedEntries(ctx context.Context, lk LedgerKinds, keys []string) (map[string]bool, error) {
	ask := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		ask = append(ask, k)
		if hold, kind, ok := cutKind(k); ok && kind != store.LedgerReserve {
			ask = append(ask, hold+":"+store.LedgerReserve)
		}
	}
	kinds, err := lk.EntryKinds(ctx, ask)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		if _, ok := kinds[k]; ok {
			out[k] = true
			continue
		}
		if hold, kind, ok := cutKind(k); ok && kind != store.LedgerReserve && kinds[hold+":"+store.LedgerReserve] == kind {
			out[k] = true
		}
	}
	return out, nil
}

func cutKind(key string) (hold, kind string, ok bool) {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return "", "", false
	}
	return key[:i], key[i+1:], true
}
