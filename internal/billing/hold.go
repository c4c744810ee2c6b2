package billing

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Hold is a reservation that must end in exactly one Settle or Refund.
//
// Its reserve is recorded as an open hold owned by this process's node id
// (see lease.go): if the process dies before the end is stored, the sweep
// of this or another node refunds it once the node's lease has lapsed. A
// hold handed to a durable record with Keep (a task) is out of the sweep's
// reach; whoever ends it later, in any process, restores it with
// RestoreHold.
type Hold struct {
	s        *Service
	acct     Account
	key      string
	Reserved int64
	ended    atomic.Bool
}

// errBacklog refuses a call while the billing writer is behind: admitting
// it would grow a queue the database is not taking.
var errBacklog = &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "billing_backlog",
	Message: "the gateway cannot record usage right now; retry shortly"}

// Reserve takes amount from the account ahead of the call. It fails with a
// 402 insufficient_quota error naming whose quota did not fit, or a 503
// billing_backlog while the writer is above its high-water mark.
func (s *Service) Reserve(ctx context.Context, acct Account, key string, amount int64) (*Hold, error) {
	if s.writer.Overloaded() {
		return nil, errBacklog
	}
	if amount < 0 {
		amount = 0
	}
	for attempt := 0; ; attempt++ {
		h, err := s.reserve(ctx, acct, key, amount)
		if !errors.Is(err, errStaleEpoch) {
			return h, quotaError(err)
		}
		if attempt > 0 {
			return nil, errRebuilding
		}
		if err := s.resync(ctx); err != nil {
			return nil, err
		}
	}
}

// reserve makes the live move and queues its entry under s.moves (see
// Service.moves).
func (s *Service) reserve(ctx context.Context, acct Account, key string, amount int64) (*Hold, error) {
	s.moves.RLock()
	defer s.moves.RUnlock()
	h := &Hold{s: s, acct: acct, key: key, Reserved: amount}
	// The live move is keyed as the entry is: one key string, not two.
	entry := h.entry(store.LedgerReserve, -amount, 0)
	if err := s.moveFor(ctx, acct, entry.Key, -amount, false); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	s.writer.Item(store.BillingItem{
		Entry: entry,
		Open: &store.Hold{Key: key, Owner: s.node, UserID: acct.UserID, TokenID: acct.TokenID, Amount: amount, CreatedAt: now,
			TeamID: acct.Payer().TeamID},
	})
	return h, nil
}

// RestoreHold rebuilds a hold taken earlier, possibly by another process,
// from what its durable record kept, so that it can be ended.
func (s *Service) RestoreHold(acct Account, key string, reserved int64) *Hold {
	return &Hold{s: s, acct: acct, key: key, Reserved: reserved}
}

func quotaError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrInsufficientUser) || errors.Is(err, ErrInsufficientToken) || errors.Is(err, ErrInsufficientTeam) {
		e := &ir.Error{Status: 402, Kind: ir.KindQuota, Code: "insufficient_quota", Message: err.Error() + " for this request", Cause: err}
		if errors.Is(err, ErrInsufficientTeam) {
			e.Level = "team"
		}
		return e
	}
	return err
}

// entry is the hold's ledger entry of a kind; its key is <hold key>:<kind>.
func (h *Hold) entry(kind string, delta, used int64) *store.LedgerEntry {
	return &store.LedgerEntry{Key: h.key + ":" + kind, Kind: kind, UserID: h.acct.UserID, TokenID: h.acct.TokenID,
		Delta: delta, TokenDelta: delta, Used: used, CreatedAt: time.Now().UTC(), TeamID: h.acct.Payer().TeamID}
}

// move is the hold's committed live move by delta.
func (h *Hold) move(delta int64) Move {
	return Move{UserID: h.acct.UserID, TokenID: h.acct.TokenID, Delta: delta, TeamID: h.acct.Payer().TeamID}
}

// mark notes on a row of a hold its team pays that the team's balance
// moved, and which team's, for the books (store.TeamPaidMarker).
func (h *Hold) mark(log *store.UsageLog) {
	if log != nil && h.acct.Payer().team() {
		log.Other, log.TeamID = markTeamPaid(log.Other), h.acct.TeamID
	}
}

// markTeamPaid adds the team-paid marker to a row's other object.
func markTeamPaid(other []byte) []byte {
	if len(other) < 2 || other[len(other)-1] != '}' {
		return []byte("{" + store.TeamPaidMarker + "}")
	}
	b := make([]byte, 0, len(other)+len(store.TeamPaidMarker)+1)
	b = append(b, other[:len(other)-1]...)
	if len(other) > 2 {
		b = append(b, ',')
	}
	b = append(b, store.TeamPaidMarker...)
	return append(b, '}')
}

// Account is who the hold is taken from.
func (h *Hold) Account() Account { return h.acct }

// Key is the hold's idempotency key.
func (h *Hold) Key() string { return h.key }

// Settle charges the real amount: the difference to the reservation is taken
// or returned, and the consume log row is written with the ledger entry. It
// returns false when the hold had already ended.
func (h *Hold) Settle(ctx context.Context, charge int64, log store.UsageLog) bool {
	return h.SettleRow(ctx, charge, &log)
}

// SettleRow is Settle with the consume row given by pointer: it fills in the
// row's type, quota and request id and queues that very row, so a caller
// whose row is already on the heap does not pay for a second copy.
func (h *Hold) SettleRow(ctx context.Context, charge int64, log *store.UsageLog) bool {
	log.Type = store.LogConsume
	log.Quota = charge
	if log.RequestID == "" {
		log.RequestID = h.key
	}
	return h.SettleWith(ctx, charge, log)
}

// SettleWith is Settle with the usage row written as given (nil: none).
func (h *Hold) SettleWith(ctx context.Context, charge int64, log *store.UsageLog) bool {
	if !h.ended.CompareAndSwap(false, true) {
		return false
	}
	diff := charge - h.Reserved
	h.mark(log)
	h.end(ctx, store.LedgerSettle, -diff, store.BillingItem{Entry: h.entry(store.LedgerSettle, -diff, charge), Log: log, Close: h.key})
	return true
}

// end moves the live balance for the hold's end and queues its item, both
// under s.moves. The item is queued whatever the move did: the ledger is
// the truth. A move Redis could not make (it lost the balances, or did not
// answer) leaves the live balances to a rebuild from the ledger, which
// flushes this item first.
func (h *Hold) end(ctx context.Context, kind string, delta int64, it store.BillingItem) {
	s := h.s
	var journaled *store.BillingItem
	if _, recorded := s.balances.(*redisBalances); recorded && kind == store.LedgerSettle {
		// Only Redis's move records the item; a copy made here keeps it
		// from going to the heap on every other end.
		cp := it
		journaled = &cp
	}
	s.moves.RLock()
	// it.Entry is h.entry(kind, ...): its key is the move's.
	err := s.moveForItem(ctx, h.acct, it.Entry.Key, delta, true, journaled)
	s.writer.Item(it)
	s.moves.RUnlock()
	switch {
	case errors.Is(err, errStaleEpoch):
		if err := s.resync(ctx); err != nil {
			s.writer.log.Warn("live balances not rebuilt yet; the watcher retries", "key", h.key, "err", err)
		}
	case err != nil:
		// An account deleted meanwhile, or Redis away (a rebuild follows).
		s.writer.log.Warn(kind+" could not adjust the live balance", "key", h.key, "err", err)
		if _, shared := s.balances.(Journal); shared && kind == store.LedgerSettle {
			// Not journaled, so a crash before the next batch would lose an
			// answered call: write it now instead.
			fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if err := s.writer.Flush(fctx); err != nil {
				s.writer.log.Warn("settle not written at once; it stays queued", "key", h.key, "err", err)
			}
		}
	}
}

// Refund returns the whole reservation. log, when not nil, is written as an
// error row so failed calls are visible in the usage log.
func (h *Hold) Refund(ctx context.Context, log *store.UsageLog) bool {
	if log != nil {
		log.Type = store.LogError
		if log.RequestID == "" {
			log.RequestID = h.key
		}
	}
	return h.RefundWith(ctx, log)
}

// RefundWith is Refund with the usage row written as given (nil: none).
func (h *Hold) RefundWith(ctx context.Context, log *store.UsageLog) bool {
	if !h.ended.CompareAndSwap(false, true) {
		return false
	}
	h.mark(log)
	h.end(ctx, store.LedgerRefund, h.Reserved, store.BillingItem{Entry: h.entry(store.LedgerRefund, h.Reserved, 0), Log: log, Close: h.key})
	return true
}

// Keep hands the hold to a durable record that will end it later, maybe in
// another process, and writes log (may be nil) with the hand-over. From
// then on the sweep leaves the hold alone.
func (h *Hold) Keep(log *store.UsageLog) {
	h.mark(log)
	h.s.writer.Item(store.BillingItem{Keep: h.key, Log: log})
}

// SettleNow ends a hold kept by a durable record at charge. Unlike Settle
// it writes synchronously, and moves the live balance only if its end was
// the one stored: a hold that was already ended (by another node, or by the
// sweep after a crash) moves nothing. It reports whether this call ended
// the hold.
func (h *Hold) SettleNow(ctx context.Context, charge int64, log *store.UsageLog) (bool, error) {
	diff := charge - h.Reserved
	h.mark(log)
	return h.endNow(ctx, store.BillingItem{Entry: h.entry(store.LedgerSettle, -diff, charge), Log: log, Close: h.key}, -diff)
}

// RefundNow ends a hold kept by a durable record by returning it whole;
// see SettleNow.
func (h *Hold) RefundNow(ctx context.Context, log *store.UsageLog) (bool, error) {
	h.mark(log)
	return h.endNow(ctx, store.BillingItem{Entry: h.entry(store.LedgerRefund, h.Reserved, 0), Log: log, Close: h.key}, h.Reserved)
}

func (h *Hold) endNow(ctx context.Context, it store.BillingItem, delta int64) (bool, error) {
	if h.ended.Load() {
		return false, nil
	}
	// The hold's own earlier items (its reserve, its hand-over) may still be
	// queued in this process; the end must not overtake them.
	if err := h.s.writer.Flush(ctx); err != nil {
		return false, err
	}
	won, err := h.s.commit(ctx, []store.BillingItem{it}, []Move{h.move(delta)})
	if err != nil {
		return false, err
	}
	if won[0] {
		h.ended.Store(true)
	}
	return won[0], nil
}

// errNoBatchWriter: ending holds synchronously needs a store that writes
// billing items in one transaction.
var errNoBatchWriter = errors.New("billing: the store cannot write billing items")

// commit writes items now and moves the live balance by moves[i] for each
// item that was written, in step with the database (see
// Balances.Committed).
func (s *Service) commit(ctx context.Context, items []store.BillingItem, moves []Move) ([]bool, error) {
	bw, ok := s.writer.st.(store.BatchWriter)
	if !ok {
		return nil, errNoBatchWriter
	}
	// A node that has not adopted the epoch in force yet (it just started)
	// would find its live move stale and drop it, while the balances it
	// should move are loaded already: adopt first.
	if r, ok := s.balances.(*redisBalances); ok && r.cur() == "" {
		if err := s.resync(ctx); err != nil {
			return nil, err
		}
	}
	// Under s.moves: a rebuild must not fall between the database write
	// and the live move (see Service.moves); a new epoch needs this node's
	// acknowledgement, so balances of it are loaded after this write.
	s.moves.RLock()
	defer s.moves.RUnlock()
	if r, ok := s.balances.(*redisBalances); ok {
		r.loadFor(ctx, moves)
	}
	var written []bool
	err := s.balances.Committed(ctx, func() ([]Move, error) {
		var err error
		written, err = bw.WriteItems(ctx, items)
		if err != nil {
			return nil, err
		}
		var out []Move
		for i, ok := range written {
			if ok && moves[i].Delta != 0 {
				out = append(out, moves[i])
			}
		}
		return out, nil
	})
	return written, err
}
