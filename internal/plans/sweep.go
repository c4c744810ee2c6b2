package plans

import (
	"context"
)

// Ended is what the sweep asks of the books about the calls behind the
// journaled draws (billing.Service answers it).
type Ended interface {
	// Abandoned reports whether node is gone for good and its calls' rows
	// are final: its lease lapsed, and whatever the books kept of its
	// unwritten ends (the Redis balance journal) is written or undone.
	Abandoned(ctx context.Context, node string) (bool, error)
	// Settled reports which of the holds have their settle stored.
	Settled(ctx context.Context, holds []string) (map[string]bool, error)
}

// Sweep keeps the journal of live draws (see Draw) to what may still be
// lost, and ends the draws of nodes that died mid-call, so that a window
// counts exactly what its rows say (CONTRACT §18: plans are crash-safe
// like balances).
//
// A settled draw whose hold's settle the books stored has its row: its
// record goes and the window keeps the charge (this node's records go the
// same way). Of a dead node, a draw still reserved is taken back whole
// (its call never settled), and a settled one whose settle was not stored
// is taken back too: its row died with the node, as its balance move did.
// Each record is ended once, also by nodes sweeping together. It answers
// how many draws it took back.
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

// sweepOwner ends owner's records: the stored settles always, everything
// else only when the owner is gone.
func (s *Service) sweepOwner(ctx context.Context, owner string, gone bool, books Ended) (int, error) {
	draws, err := s.be.journal(ctx, owner)
	if err != nil {
		return 0, err
	}
	if len(draws) == 0 && gone {
		return 0, s.be.forgetOwner(ctx, owner)
	}
	var settledKeys []string
	for _, d := range draws {
		if d.Settled {
			settledKeys = append(settledKeys, d.HoldKey)
		}
	}
	stored := map[string]bool{}
	if len(settledKeys) > 0 {
		if stored, err = books.Settled(ctx, settledKeys); err != nil {
			return 0, err
		}
	}
	undone := 0
	for _, d := range draws {
		switch {
		case d.Settled && stored[d.HoldKey]:
			d.Amount = 0 // the row counts it: only the record goes
		case !gone:
			continue // a live node's call, or its row still on the way
		}
		did, err := s.be.undo(ctx, d)
		if err != nil {
			return undone, err
		}
		if did && d.Amount != 0 {
			undone++
		}
	}
	if undone > 0 {
		s.log.Info("plan sweep took back the draws of calls a stopped node never ended", "node", owner, "draws", undone)
	}
	return undone, nil
}
