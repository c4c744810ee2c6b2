package batch

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A create keeps its tickets (out of the billing sweep's reach) before it
// inserts the batch that names them, so that a batch never names a hold
// that was not stored. A process that dies between the two leaves kept
// holds named batch:<id>:… that no batch names: money held that no record
// will ever end. refundOrphans gives those back.

// orphanGrace is how old such a hold must be before it is an orphan: a
// create on another node may be between the two steps right now, and
// they are milliseconds apart.
const orphanGrace = 10 * time.Minute

// orphanEvery is how often the runner looks for orphans, beyond once at
// its start: it lists every open hold.
const orphanEvery = 10 * time.Minute

// refundOrphans refunds each kept batch hold older than orphanGrace at now
// whose batch does not exist, with its budget share: a create's ticket
// holds its whole reservation against the period budgets that applied.
// Each refund ends the hold once, whichever node does it.
func (s *Service) refundOrphans(ctx context.Context, now time.Time) (int, error) {
	if s.Holds == nil {
		return 0, nil
	}
	hs, err := s.Holds.List(ctx)
	if err != nil {
		return 0, err
	}
	refunded := 0
	for _, h := range hs {
		id, model, ok := batchHold(h.Key)
		if !ok || h.Owner != "" || now.Sub(h.CreatedAt) < orphanGrace {
			continue
		}
		if _, err := s.Batches.GetBatch(ctx, id); !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				return refunded, err
			}
			continue
		}
		rec := admission.Record{Key: h.Key, Reserved: h.Amount, UserID: h.UserID, TokenID: h.TokenID, Model: model,
			HeldNS: h.CreatedAt.UnixNano(), Budget: h.Amount}
		won, err := s.gate().Restore(rec).RefundNow(ctx, nil)
		if err != nil {
			return refunded, err
		}
		if won {
			refunded++
			s.Logger.Warn("refunded the hold of a batch whose create did not finish", "hold", h.Key, "amount", h.Amount)
		}
	}
	return refunded, nil
}

// batchHold splits a create's hold key, batch:<id>:<model>, into the
// batch and the model.
func batchHold(key string) (id, model string, ok bool) {
	rest, ok := strings.CutPrefix(key, store.BatchHoldPrefix)
	if !ok {
		return "", "", false
	}
	id, model, ok = strings.Cut(rest, ":")
	return id, model, ok && id != ""
}
