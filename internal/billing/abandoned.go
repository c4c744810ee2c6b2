package billing

import (
	"context"
	"errors"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// What other books that ride on a hold (the plans' windows, the period
// budgets) ask before they end the records a dead node left: whether the
// node is gone and its rows final, and how its holds ended.

// Abandoned reports whether node's lease lapsed and, with Redis balances,
// its balance journal is empty: every settle it journaled but never wrote
// has been written by a sweep (so its row exists), and every other move
// undone. Until then, what the database says of its holds may still grow.
func (s *Service) Abandoned(ctx context.Context, node string) (bool, error) {
	lc, ok := s.writer.st.(LeaseChecker)
	if !ok || node == s.node {
		return false, nil
	}
	now, err := s.now(ctx)
	if err != nil {
		return false, err
	}
	lapsed, err := lc.LeaseLapsed(ctx, node, now)
	if err != nil || !lapsed {
		return false, err
	}
	r, ok := s.balances.(*redisBalances)
	if !ok {
		return true, nil
	}
	e := r.cur()
	if e == "" {
		return false, nil // not adopted the epoch yet: ask again next sweep
	}
	n, err := r.pending(ctx, e, node)
	return n == 0, err
}

// HoldFacts is implemented by stores that can say how holds ended.
type HoldFacts interface {
	HoldEnds(ctx context.Context, holds []string) (map[string]store.HoldEnd, error)
}

// HoldEnds says how each of holds ended as far as the ledger knows
// (settled and at what charge, released by a sweep, or kept by a durable
// record): what the plan and budget sweeps ask before they end the draws
// and shares a node left.
func (s *Service) HoldEnds(ctx context.Context, holds []string) (map[string]store.HoldEnd, error) {
	hf, ok := s.writer.st.(HoldFacts)
	if !ok {
		return nil, errNoHoldFacts
	}
	return hf.HoldEnds(ctx, holds)
}

// errNoHoldFacts: a budget share is never ended blind.
var errNoHoldFacts = errors.New("billing: the store cannot say how holds ended")
