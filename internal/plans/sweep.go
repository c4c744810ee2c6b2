package plans

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Ended is what the sweep asks of the books about the calls behind the
// journaled draws (billing.Service answers it).
type Ended interface {
	// Abandoned reports whether node is gone for good and its calls' rows
	// are final: its lease lapsed, and whatever the books kept of its
	// unwritten ends (the Redis balance journal) is written or undone.
	Abandoned(ctx context.Context, node string) (bool, error)
	// HoldEnds says how each of the holds ended as far as the ledger
	// knows: settled (its settle stored), released by a sweep, or neither.
	HoldEnds(ctx context.Context, holds []string) (map[string]store.HoldEnd, error)
}

// lateGrace is how long a late draw of a node taken for dead again waits
// for its row before the sweep drops it unstored: longer than the moment
// between the node's late end and its settle reaching the balance
// journal, during which the books may still call the node abandoned.
const lateGrace = 2 * time.Minute

// Sweep keeps the journal of live draws (see Draw) to what may still be
// lost, and ends the draws of nodes that died mid-call, so that a window
// counts exactly what its rows say (CONTRACT §18: plans are crash-safe
// like balances).
//
// A settled draw whose hold's settle the books stored has its row: its
// record goes and the window keeps the charge (this node's records go the
// same way); one whose hold a sweep released has none (its settle was
// refused): the charge goes with the record, whoever's it is. Of a dead
// node, a draw still reserved is taken back whole (its call never
// settled), and a settled one whose settle was neither stored nor refused
// has its charge taken back too, its row having died with the node — but
// kept as a late draw, since the node may only have stalled and write the
// row yet. A late draw (its node ended it after a sweep took it back) is
// counted at its charge once its settle is stored, and dropped when its
// hold was released (the settle was refused) or its node stayed gone past
// lateGrace without it. Each record is ended once, also by nodes sweeping
// together and against the node's own late end. It answers how many draws
// it took back.
func (s *Service) Sweep(ctx context.Context, books Ended) (int, error) {
	owners, err := s.be.owners(ctx)
	if err != nil {
		return 0, err
	}
	undone := 0
	for _, owner := range owners {
		gone := false
		if owner != s.node {
			if gone, err = books.Abandoned(ctx, owner); err != nil {
				return undone, err
			}
		}
		n, err := s.sweepOwner(ctx, owner, gone, books)
		undone += n
		if err != nil {
			return undone, err
		}
	}
	return undone, nil
}

// sweepOwner ends owner's records: the stored settles and the decided
// late ends always, everything else only when the owner is gone.
func (s *Service) sweepOwner(ctx context.Context, owner string, gone bool, books Ended) (int, error) {
	draws, err := s.be.journal(ctx, owner)
	if err != nil {
		return 0, err
	}
	if len(draws) == 0 && gone {
		return 0, s.be.forgetOwner(ctx, owner)
	}
	ends, err := askBooks(ctx, draws, books)
	if err != nil {
		return 0, err
	}
	undone, counted := 0, 0
	for _, d := range draws {
		end := ends[d.HoldKey]
		switch {
		case d.Late:
			if !s.lateDecided(&d, end, gone) {
				continue
			}
		case d.Settled && end.Settled:
			d.Amount = 0 // the row counts it: only the record goes
		case d.Settled && end.Released:
			// its settle was refused: no row counts it
		case !gone:
			continue // a live node's call, or its row still on the way
		case d.Settled:
			// Its row died with the node, unless the node only stalled and
			// writes it yet: the charge goes, owed back as a late draw.
			made, err := s.be.makeLate(ctx, d, s.now())
			if err != nil {
				return undone, err
			}
			if made {
				undone++
			}
			continue
		}
		did, err := s.be.undo(ctx, d)
		if err != nil {
			return undone, err
		}
		switch {
		case did && d.Amount < 0:
			counted++
		case did && d.Amount != 0:
			undone++
		}
	}
	if undone > 0 {
		s.log.Info("plan sweep took back the draws of calls a stopped node never ended", "node", owner, "draws", undone)
	}
	if counted > 0 {
		s.log.Warn("plan sweep counted the late ends of a node taken for dead while it ran, their rows being stored",
			"node", owner, "draws", counted)
	}
	return undone, nil
}

// askBooks asks the books how the holds of the settled and the late draws
// ended (the reserved ones wait for their node), when there are any.
func askBooks(ctx context.Context, draws []store.PlanDraw, books Ended) (map[string]store.HoldEnd, error) {
	var holds []string
	for _, d := range draws {
		if d.Late || d.Settled {
			holds = append(holds, d.HoldKey)
		}
	}
	if len(holds) == 0 {
		return map[string]store.HoldEnd{}, nil
	}
	return books.HoldEnds(ctx, holds)
}

// lateDecided says whether the late draw d is decided, and sets what its
// undo moves: minus its charge (the windows take the charge its stored row
// counts) or nothing (no row will count it).
func (s *Service) lateDecided(d *store.PlanDraw, end store.HoldEnd, gone bool) bool {
	switch {
	case end.Settled:
		d.Amount = -d.Amount
	case end.Released, gone && s.now().Sub(d.EndedAt) > lateGrace:
		d.Amount = 0
	default:
		return false
	}
	return true
}
