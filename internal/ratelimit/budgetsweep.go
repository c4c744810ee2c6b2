package ratelimit

import (
	"context"

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
// its hold. Of every owner, live or not, it drops the settled records
// whose settle is stored, and takes back the charge of those whose hold a
// sweep released (the row was refused: the owner was taken for dead while
// it ran); of an owner gone, a settled record whose settle is neither
// stored nor refused has its charge taken back too, owed as a late record
// should the owner only have stalled and its row still come. Each share
// is ended once, also by nodes sweeping together and against a late end
// of its owner, whose charge is counted once its row is stored (see
// budgetlate.go). It answers how many shares it ended or took back.
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
		gone := false
		if owner != s.owner {
			if gone, err = books.Abandoned(ctx, owner); err != nil {
				return ended, err
			}
		}
		n, err := s.sweepOwner(ctx, rb, owner, gone, books)
		ended += n
		if err != nil {
			return ended, err
		}
	}
	if ended > 0 {
		s.log.Info("budget sweep ended the period-budget shares of calls a stopped node never ended or whose rows were refused", "shares", ended)
	}
	return ended, nil
}

// sweepOwner ends owner's records the books have decided: the settled
// ones always, the others only once the owner is gone.
func (s *Service) sweepOwner(ctx context.Context, rb *redisBackend, owner string, gone bool, books BudgetBooks) (int, error) {
	recs, err := rb.budgetRecords(ctx, owner)
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 && gone {
		return 0, rb.forgetBudgetOwner(ctx, owner)
	}
	var shares []journalShare
	var holds []string
	for hold, raw := range recs {
		if sh, ok := parseBudgetRecord(hold, raw); ok && (gone || sh.settled) {
			shares = append(shares, sh)
			holds = append(holds, hold)
		}
	}
	if len(holds) == 0 {
		return 0, nil
	}
	ends, err := books.HoldEnds(ctx, holds)
	if err != nil {
		return 0, err
	}
	ended := 0
	for _, sh := range shares {
		m, ok := s.sweepDecides(sh, ends[sh.hold], gone)
		if !ok {
			continue
		}
		if m.late {
			m.lateRec = lateRecordOf(rb, owner, sh, s.Now())
		}
		did, err := rb.sweepEnd(ctx, owner, sh, m)
		if err != nil {
			return ended, err
		}
		if did && m.counts {
			ended++
		}
	}
	return ended, nil
}

// sweepMove is what the sweep does with a record: drop it, moving its
// counters by delta, and make it late (lateRec, the late record); counts
// says the sweep ended or took back a share (not only trimmed a record).
type sweepMove struct {
	delta   int64
	late    bool
	lateRec string
	counts  bool
}

// sweepDecides says whether the books have decided the share sh of an
// owner (gone or not) by the end of its hold, and what then moves.
func (s *Service) sweepDecides(sh journalShare, end store.HoldEnd, gone bool) (sweepMove, bool) {
	if sh.settled {
		switch {
		case end.Settled:
			return sweepMove{}, true // its row counts it: only the record goes
		case end.Released:
			return sweepMove{delta: -sh.amount, counts: true}, true // its row was refused
		case gone:
			// Its row died with the owner, unless the owner only stalled
			// and writes it yet: the charge goes, owed as a late record.
			return sweepMove{delta: -sh.amount, late: true, counts: true}, true
		}
		return sweepMove{}, false // its row may be on the way
	}
	switch {
	case !gone:
		return sweepMove{}, false // a live owner's call in flight
	case sh.kept && !end.Released, end.Kept:
		// The durable record ends it, in any process, whatever its end —
		// unless the sweep released the hold before the hand-over was
		// stored, when the record's end finds nothing to end.
		return sweepMove{}, false
	case end.Settled:
		return sweepMove{delta: end.Charge - sh.amount, counts: true}, true
	}
	return sweepMove{delta: -sh.amount, counts: true}, true
}
