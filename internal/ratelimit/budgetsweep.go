package ratelimit

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// BudgetBooks is what the budget sweep asks of the books about the calls
// behind a dead owner's journaled shares (billing.Service answers it).
type BudgetBooks interface {
	// Abandoned reports whether owner is gone for good and its calls'
	// ledger entries are final (see billing.Service.Abandoned).
	Abandoned(ctx context.Context, owner string) (bool, error)
	// HoldEnds says how each hold ended as far as the ledger knows.
	HoldEnds(ctx context.Context, holds []string) (map[string]store.HoldEnd, error)
}

// SweepBudgets ends the period-budget shares that owners which died
// mid-call left in Redis, so that a budget counts what its rows say and no
// estimate of a call that will never end: a share whose hold was settled
// becomes the charge, any other is given back; a share handed to a
// durable record (a task, a batch) is left to it unless the sweep released
// its hold. Each share is ended once, also by nodes sweeping together and
// against a late end of its owner, whose charge is counted once its row is
// stored (see budgetlate.go). It answers how many shares it ended.
func (s *Service) SweepBudgets(ctx context.Context, books BudgetBooks) (int, error) {
	rb, ok := s.be.(*redisBackend)
	if !ok {
		return 0, nil // counters in memory die with their process
	}
	ended, err := s.sweepLate(ctx, rb, books)
	if err != nil {
		return ended, err
	}
	owners, err := rb.budgetOwners(ctx)
	if err != nil {
		return ended, err
	}
	for _, owner := range owners {
		if owner == s.owner {
			continue
		}
		gone, err := books.Abandoned(ctx, owner)
		if err != nil {
			return ended, err
		}
		if !gone {
			continue
		}
		n, err := s.sweepOwner(ctx, rb, owner, books)
		ended += n
		if err != nil {
			return ended, err
		}
	}
	if ended > 0 {
		s.log.Info("budget sweep ended the period-budget shares of calls a stopped node never ended", "shares", ended)
	}
	return ended, nil
}

func (s *Service) sweepOwner(ctx context.Context, rb *redisBackend, owner string, books BudgetBooks) (int, error) {
	recs, err := rb.budgetRecords(ctx, owner)
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		return 0, rb.forgetBudgetOwner(ctx, owner)
	}
	holds := make([]string, 0, len(recs))
	for h := range recs {
		holds = append(holds, h)
	}
	ends, err := books.HoldEnds(ctx, holds)
	if err != nil {
		return 0, err
	}
	ended := 0
	for hold, rec := range recs {
		amount, keys, kept, ok := parseBudgetRecord(rec)
		if !ok {
			continue
		}
		delta, end := -amount, ends[hold]
		switch {
		case kept && !end.Released, end.Kept:
			// The durable record ends it, in any process, whatever its end
			// — unless the sweep released the hold before the hand-over was
			// stored, when the record's end finds nothing to end.
			continue
		case end.Settled:
			delta = end.Charge - amount
		}
		_, did, err := rb.budgetEnd(ctx, &journalTag{owner: owner, hold: hold}, keys, delta, 0, time.Time{})
		if err != nil {
			return ended, err
		}
		if did {
			ended++
		}
	}
	return ended, nil
}
