package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// BudgetHold is a reservation's share of the period budgets: the estimate
// is counted as spent at admission, so concurrent calls cannot together
// overrun a budget, and corrected to the real charge at settlement.
type BudgetHold struct {
	p      *Plan
	keys   [maxBudgets]string
	starts [maxBudgets]time.Time
	amount int64
	ended  atomic.Bool
	// jr is the share's journal record (nil: not journaled); see
	// budgetjournal.go.
	jr *journalTag
}

// Hold counts amount against every budget that applies — key, user, team
// and organisation together, all or none, in one atomic step — or refuses
// the call with 429 budget_exceeded naming the level whose period it does
// not fit in; nothing is counted then. hold is the key of the reservation
// the share belongs to, under which a share in Redis is journaled.
func (p *Plan) Hold(ctx context.Context, amount int64, hold string) (*BudgetHold, error) {
	if !p.HasBudget() {
		return nil, nil
	}
	amount = max(amount, 0)
	now := p.s.Now()
	h := &BudgetHold{p: p, amount: amount, jr: p.s.journal(hold, amount)}
	var takes [maxBudgets]budgetTake
	for i := 0; i < p.nb; i++ {
		b := p.budget[i]
		h.keys[i] = budgetKey(b.kind, b.id, b.period, now)
		h.starts[i] = PeriodStart(b.period, now)
		takes[i] = budgetTake{key: h.keys[i], limit: b.limit, expire: PeriodEnd(b.period, now), kind: b.kind, id: b.id, start: h.starts[i]}
	}
	failed, used, err := p.s.be.budgetTake(ctx, takes[:p.nb], amount, p.s.loadBudget, h.jr)
	if err != nil {
		return nil, budgetUnavailable(err)
	}
	if failed < 0 {
		return h, nil
	}
	b, end := p.budget[failed], takes[failed].expire
	p.s.refused("budget")
	left := max(b.limit-used, 0)
	return nil, &Refused{RetryAfter: end.Sub(now), Err: &ir.Error{Status: 429, Kind: ir.KindRateLimit, Code: "budget_exceeded",
		Level: level(b.kind), Message: fmt.Sprintf("the %s's %s budget of %d is spent (%d left, this request needs up to %d); it resets at %s",
			subjectName(b.kind), b.period, b.limit, left, amount, end.Format(time.RFC3339))}}
}

// subjectName is how a refusal's message names a subject kind.
func subjectName(kind string) string {
	switch kind {
	case "token":
		return "API key"
	case "org":
		return "organisation"
	}
	return kind
}

// Settle turns the held estimate into the real charge.
func (h *BudgetHold) Settle(ctx context.Context, charge int64) {
	if h == nil || !h.ended.CompareAndSwap(false, true) {
		return
	}
	used := h.correct(ctx, charge-h.amount, charge, "period budget could not be corrected")
	for i := range used {
		if f := h.p.s.onBudget.Load(); f != nil && charge > 0 && h.keys[i] != "" && alerted(h.p.budget[i].kind) {
			b := h.p.budget[i]
			(*f)(BudgetUse{Kind: b.kind, ID: b.id, Used: used[i], Limit: b.limit, Period: b.period, Start: h.starts[i]})
		}
	}
}

// Refund gives the whole estimate back (the call failed).
func (h *BudgetHold) Refund(ctx context.Context) {
	if h == nil || !h.ended.CompareAndSwap(false, true) {
		return
	}
	h.correct(ctx, -h.amount, 0, "period budget could not be refunded")
}

// correct moves every counter of the share by delta and answers each
// one's spending after it (nil when nothing moved). A journaled share is
// corrected in one step with the end of its record, and not at all when a
// sweep ended the record first (this process was taken for dead): its
// charge (0 for a refund) is then owed by a late record that the sweep
// counts once the call's row is stored (see sweepLate).
func (h *BudgetHold) correct(ctx context.Context, delta, charge int64, failed string) []int64 {
	if h.jr != nil {
		if rb, ok := h.p.s.be.(*redisBackend); ok {
			used, _, err := rb.budgetEnd(ctx, h.jr, h.keys[:h.p.nb], delta, charge, h.p.s.Now())
			if err != nil {
				h.p.s.log.Warn(failed, "err", err)
			}
			return used
		}
	}
	used := make([]int64, h.p.nb)
	for i := 0; i < h.p.nb; i++ {
		if h.keys[i] == "" || delta == 0 && h.p.s.onBudget.Load() == nil {
			continue
		}
		u, err := h.p.s.be.budgetAdd(ctx, h.keys[i], delta)
		if err != nil {
			h.p.s.log.Warn(failed, "err", err)
			continue
		}
		used[i] = u
	}
	return used
}

// Restore rebuilds the budget share of a reservation of amount held at
// heldAt in an earlier request (a task or a batch ended by a poller long
// after, perhaps on another node or after a restart), so that it ends like
// a share taken now: Settle turns it into the charge, Refund gives it back.
// Only the periods that are still the ones heldAt fell in are corrected; a
// share of a period that has ended is left alone (its counter is never read
// again), and a counter not loaded on this backend is left to be loaded
// from the usage log. hold and owner name the share's journal record
// (owner empty: the share was never journaled).
func (p *Plan) Restore(heldAt time.Time, amount int64, hold, owner string) *BudgetHold {
	if !p.HasBudget() {
		return nil
	}
	now := p.s.Now()
	h := &BudgetHold{p: p, amount: max(amount, 0)}
	if _, shared := p.s.be.(*redisBackend); shared && owner != "" && hold != "" {
		h.jr = &journalTag{owner: owner, hold: hold, kept: true}
	}
	for i := 0; i < p.nb; i++ {
		b := p.budget[i]
		if PeriodStart(b.period, now).Equal(PeriodStart(b.period, heldAt)) {
			h.keys[i], h.starts[i] = budgetKey(b.kind, b.id, b.period, heldAt), PeriodStart(b.period, heldAt)
		}
	}
	return h
}

// Keys are the period counters the share is held on (one per budget that
// applies; empty for a period that ended before the share was restored).
func (h *BudgetHold) Keys() []string {
	if h == nil {
		return nil
	}
	var out []string
	for i := 0; i < h.p.nb; i++ {
		out = append(out, h.keys[i])
	}
	return out
}

// Keep hands the share to the durable record that will end it (see
// Restore): the journal's sweep leaves it alone from then on, unless the
// books say its hold was released before the hand-over was stored.
func (h *BudgetHold) Keep(ctx context.Context) {
	if h == nil || h.jr == nil {
		return
	}
	rb, ok := h.p.s.be.(*redisBackend)
	if !ok {
		return
	}
	h.jr.kept = true
	if err := rb.budgetKeep(ctx, h.jr); err != nil {
		h.p.s.log.Warn("period budget share not marked kept", "err", err)
	}
}

// Owner is the journal owner of the share ("" when it is not journaled),
// for the durable record that may end it in another process.
func (h *BudgetHold) Owner() string {
	if h == nil || h.jr == nil {
		return ""
	}
	return h.jr.owner
}

// Amount is the share held.
func (h *BudgetHold) Amount() int64 {
	if h == nil {
		return 0
	}
	return h.amount
}

// budgetUnavailable refuses a call whose budget cannot be checked: a
// budget is money, never spent blind. The code names what is away: Redis
// (redis_unavailable) or the database the period is loaded from
// (store_unavailable).
func budgetUnavailable(err error) error {
	code := "redis_unavailable"
	var se *storeErr
	if errors.As(err, &se) {
		code = "store_unavailable"
	}
	return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: code,
		Message: "the gateway cannot check the period budget right now; retry shortly", Cause: err}
}

// storeErr marks a failure to read a period's spending from the database.
type storeErr struct{ err error }

func (e *storeErr) Error() string { return e.err.Error() }
func (e *storeErr) Unwrap() error { return e.err }
