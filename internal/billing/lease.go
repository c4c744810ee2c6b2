package billing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Holds are owned by the node that took them. A node id is made up at
// every process start, so a restarted process is a new owner and the holds
// of its previous life are released like those of any dead node. The
// owner's liveness is a lease in the database that it renews every third
// of the lease period; the sweep of any node releases the open holds of
// owners whose lease ended, and (with Redis balances) reconciles their
// journals (see Journal). Lease times come from the database's clock.
//
// A node whose lease lapses while it still runs (it stalled, or the
// database was away for longer than the lease) may see its holds released
// and its journal reconciled by another node; its own late ends then find
// the hold no longer open and write nothing, so the database stays exact,
// and the live balances are brought back to it (see redis_fence.go).

// DefaultLease is the lease period when none is configured.
const DefaultLease = 30 * time.Second

// sweepBatch bounds the holds released per transaction.
const sweepBatch = 256

func newNodeID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "node-" + hex.EncodeToString(b)
}

// Node is this process's owner id for the holds it takes.
func (s *Service) Node() string { return s.node }

// TakeLease records this node's lease. It must succeed before the first
// Reserve: a hold whose owner has no lease counts as abandoned.
// Lease times are read from the database's clock (DBClock), so the clocks
// of the nodes need not agree.
func (s *Service) TakeLease(ctx context.Context, lease time.Duration) error {
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	return s.writer.st.Holds().Lease(ctx, s.node, now.Add(lease))
}

// RunLeases renews this node's lease every third of lease and sweeps every
// half lease (and once at once) until ctx ends, and returns when both have
// stopped (a renewal after the shutdown's last write would revive the
// lease). Failures are logged and retried on the next tick: a database
// outage must not stop the process.
func (s *Service) RunLeases(ctx context.Context, lease time.Duration) {
	go s.watchEpoch(ctx)
	var renewing sync.WaitGroup
	renewing.Go(func() { s.renewLeases(ctx, lease) })
	defer renewing.Wait()
	sweep := time.NewTicker(max(lease/2, time.Millisecond))
	defer sweep.Stop()
	s.sweepLogged(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			s.sweepLogged(ctx)
		}
	}
}

// renewLeases runs on a goroutine of its own: a sweep slowed by a busy
// database must not hold the renewal back past the lease, or the other
// nodes take this live node for dead (see redis_fence.go).
func (s *Service) renewLeases(ctx context.Context, lease time.Duration) {
	renew := time.NewTicker(max(lease/3, time.Millisecond))
	defer renew.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			if err := s.TakeLease(ctx, lease); err != nil && ctx.Err() == nil {
				s.writer.log.Warn("billing lease not renewed", "node", s.node, "err", err)
				continue
			}
			s.checkFence(ctx)
		}
	}
}

func (s *Service) sweepLogged(ctx context.Context) {
	n, err := s.Sweep(ctx)
	if err != nil && ctx.Err() == nil {
		s.writer.log.Warn("billing sweep failed; retrying on the next tick", "err", err)
	}
	if n > 0 {
		s.writer.log.Info("billing sweep released abandoned holds", "holds", n)
	}
}

// Sweep refunds the open holds of nodes whose lease has lapsed: ledger
// entry <hold>:release and an error row, in the transaction that ends the
// hold, so it happens once even when several nodes sweep together; the
// live balances move in step (see Balances.Committed). It returns how many
// holds this call released.
//
// With shared (Redis) balances it then reconciles the journals of lapsed
// nodes (see Journal), so a move made in Redis whose ledger entry died
// with its node is given back there too.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	now, err := s.now(ctx)
	if err != nil {
		return 0, err
	}
	// Journals first: a settle the dead node answered closes its hold
	// before the hold sweep would refund it.
	undone, err := s.reconcileJournals(ctx, now)
	if undone > 0 {
		s.writer.log.Info("billing sweep gave back live moves whose ledger entries were lost with their node", "moves", undone)
	}
	if err != nil {
		return 0, err
	}
	return s.sweepHolds(ctx, now)
}

func (s *Service) sweepHolds(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		holds, err := s.writer.st.Holds().Lapsed(ctx, now, s.node, sweepBatch)
		if err != nil || len(holds) == 0 {
			return total, err
		}
		items := make([]store.BillingItem, len(holds))
		moves := make([]Move, len(holds))
		for i, h := range holds {
			items[i], moves[i] = releaseItem(h), Move{UserID: h.UserID, TokenID: h.TokenID, Delta: h.Amount, TeamID: h.TeamID}
		}
		written, err := s.commit(ctx, items, moves)
		if err != nil {
			return total, err
		}
		for _, ok := range written {
			if ok {
				total++
			}
		}
		if len(holds) < sweepBatch {
			_ = s.writer.st.Holds().Forget(ctx, now)
			return total, nil
		}
	}
}

// releaseItem refunds an abandoned hold and leaves an error row saying why.
// Its key, <hold>:release, differs from the owner's own <hold>:refund, so
// the journal can tell the owner's lost refund from the sweep's release.
func releaseItem(h store.Hold) store.BillingItem {
	now := time.Now().UTC()
	other, _ := json.Marshal(map[string]string{"reason": "released: the gateway process handling this call stopped before it ended",
		"owner": h.Owner})
	return store.BillingItem{
		Entry: &store.LedgerEntry{Key: h.Key + ":release", Kind: store.LedgerRefund, UserID: h.UserID, TokenID: h.TokenID,
			Delta: h.Amount, TokenDelta: h.Amount, CreatedAt: now, TeamID: h.TeamID},
		Log:   &store.UsageLog{Type: store.LogError, UserID: h.UserID, TokenID: h.TokenID, RequestID: h.Key, Other: other, CreatedAt: now},
		Close: h.Key,
	}
}
