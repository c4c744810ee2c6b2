// Package plans keeps the subscription plans users hold (CONTRACT §18) and
// their rolling windows: which plan covers a call, the draw of its
// reservation from every open window of that plan at once (one Redis
// script run, or one database transaction without Redis), its correction
// to the real charge, and the windows' books. It moves no balance:
// internal/admission decides that a covered call is paid by the plan.
package plans

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Overflow settings: what a call covered by a plan whose window is spent
// does.
const (
	OverflowBalance = "balance"
	OverflowWait    = "wait"
)

// Service is the plans of one gateway process.
type Service struct {
	node string
	st   store.PlanRepo
	be   backend
	log  *slog.Logger
	now  func() time.Time
	snap atomic.Pointer[snapshot]
}

// Held is a user's grant of a plan, as admission sees it.
type Held struct {
	Grant store.PlanGrant
	Plan  *store.Plan
}

// snapshot is what every call reads without a lock: the grants by user,
// highest priority first, and who chose to wait.
type snapshot struct {
	byUser map[int64][]Held
	wait   map[int64]bool
}

// Options configure a Service; Now defaults to time.Now.
type Options struct {
	Store store.PlanRepo
	// Redis holds the windows when several nodes share it; nil keeps them
	// in the database.
	Redis Redis
	Log   *slog.Logger
	Now   func() time.Time
	// Node is this process's owner id (billing's): live draws are
	// journaled under it. Empty journals nothing.
	Node string
}

// New builds the service with nothing held until Reload.
func New(o Options) *Service {
	s := &Service{st: o.Store, log: o.Log, now: o.Now, node: o.Node}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.be = sqlBackend{st: o.Store}
	if o.Redis != nil {
		s.be = newRedisBackend(o.Redis, o.Store)
	}
	s.snap.Store(&snapshot{})
	return s
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// Reload reads plans, the grants in force and the overflow settings.
func (s *Service) Reload(ctx context.Context) error {
	plans, err := s.st.List(ctx)
	if err != nil {
		return err
	}
	grants, err := s.st.Grants(ctx, 0, s.now())
	if err != nil {
		return err
	}
	over, err := s.st.Overflows(ctx)
	if err != nil {
		return err
	}
	byID := make(map[int64]*store.Plan, len(plans))
	for i := range plans {
		byID[plans[i].ID] = &plans[i]
	}
	snap := &snapshot{wait: map[int64]bool{}}
	for _, g := range grants {
		p := byID[g.PlanID]
		if p == nil || len(p.Windows) == 0 {
			continue
		}
		if snap.byUser == nil {
			snap.byUser = map[int64][]Held{}
		}
		snap.byUser[g.UserID] = append(snap.byUser[g.UserID], Held{Grant: g, Plan: p})
	}
	for _, hs := range snap.byUser {
		slices.SortStableFunc(hs, func(a, b Held) int { return b.Plan.Priority - a.Plan.Priority })
	}
	for id, mode := range over {
		if mode == OverflowWait {
			snap.wait[id] = true
		}
	}
	s.snap.Store(snap)
	return nil
}

// Covering is the grants of user that cover model for group, highest
// priority first. With no grant held by anyone it is one pointer load and
// a length check: a gateway without plans pays nothing more per call.
func (s *Service) Covering(user int64, group, model string) []Held {
	if s == nil {
		return nil
	}
	snap := s.snap.Load()
	if len(snap.byUser) == 0 {
		return nil
	}
	hs := snap.byUser[user]
	if len(hs) == 0 {
		return nil
	}
	now := s.now()
	var out []Held
	for _, h := range hs {
		if h.Grant.Until.After(now) && covers(h.Plan, group, model) {
			out = append(out, h)
		}
	}
	return out
}

func covers(p *store.Plan, group, model string) bool {
	if len(p.Models) > 0 && !slices.Contains(p.Models, model) {
		return false
	}
	return len(p.Groups) == 0 || slices.Contains(p.Groups, group)
}

// Waits reports whether user chose plan_overflow wait.
func (s *Service) Waits(user int64) bool { return s.snap.Load().wait[user] }

// Validate checks a plan as the root defines it.
func Validate(p *store.Plan) error {
	if p.Name == "" {
		return errors.New("a plan needs a name")
	}
	if p.PriceUSD < 0 {
		return errors.New("price_usd must not be negative")
	}
	if p.Period == "" {
		p.Period = "month"
	}
	if p.Period != "month" && p.Period != "year" && p.Period != "week" && p.Period != "day" {
		return errors.New("period must be day, week, month or year")
	}
	if len(p.Windows) == 0 || len(p.Windows) > 8 {
		return errors.New("a plan needs one to eight windows")
	}
	for _, w := range p.Windows {
		set := 0
		for _, v := range []int64{w.Minutes, w.Hours, w.Days} {
			if v < 0 {
				return errors.New("a window's length must be positive")
			}
			if v > 0 {
				set++
			}
		}
		if set != 1 {
			return errors.New("a window takes exactly one of minutes, hours or days")
		}
		if w.Quota <= 0 {
			return errors.New("a window's quota must be positive")
		}
	}
	return nil
}
