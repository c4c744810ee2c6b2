package admission

import (
	"context"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Money that waits (a task polled for minutes, a batch that runs for
// hours) holds it through a durable ticket: Hold takes the reservation and
// its budget share, Keep hands them to the durable record that will end
// them, Record is what that record stores, Restore rebuilds the ticket in
// any process (after a restart too), and SettleNow or RefundNow ends it
// once, whoever tries. Live calls use the same ticket ended with Settle or
// Refund; nothing else moves money (internal/archtest says so).

// Record is a ticket as a durable record keeps it: the hold's key and
// reserved amount, who pays and for which model (the limits that apply
// are resolved again from them when the ticket is restored), when it was
// taken, and its share of the period budgets.
type Record struct {
	Key      string `json:"key"`
	Reserved int64  `json:"reserved"`
	UserID   int64  `json:"user_id"`
	TokenID  int64  `json:"token_id"`
	Group    string `json:"group"`
	Model    string `json:"model"`
	// TeamID and OrgID are the payer's team and organisation when the
	// ticket was taken (0: none), whose budgets the share is held on.
	TeamID int64 `json:"team_id,omitempty"`
	OrgID  int64 `json:"org_id,omitempty"`
	// TeamPays: the team's shared balance holds the reservation, so the
	// ticket ends there whatever the team's billing is by then.
	TeamPays bool `json:"team_pays,omitempty"`
	// HeldNS is when the reservation was taken (Unix nanoseconds): the
	// budget periods it counts in, and the price version a deferred charge
	// is priced at.
	HeldNS int64 `json:"held_ns"`
	// Budget is the share held against the period budgets (0: none
	// applied); BudgetKeys names their counters, for the books and for
	// operators reading a record.
	Budget     int64    `json:"budget,omitempty"`
	BudgetKeys []string `json:"budget_keys,omitempty"`
	// BudgetOwner is the node whose journal records the share in Redis
	// (empty: not journaled), so that whoever ends the ticket ends the
	// record with it.
	BudgetOwner string `json:"budget_owner,omitempty"`
}

// HeldAt is when the ticket was taken.
func (r Record) HeldAt() time.Time { return time.Unix(0, r.HeldNS) }

// Account is who pays.
func (r Record) Account() billing.Account {
	return billing.Account{UserID: r.UserID, TokenID: r.TokenID, Group: r.Group, TeamID: r.TeamID, OrgID: r.OrgID, TeamPays: r.TeamPays}
}

// Hold takes a deferred reservation of amount under key for acct's use of
// model: the period budgets that apply first (429 budget_exceeded when it
// does not fit), then the balance (402 insufficient_quota). No rate-limit
// lease is taken: deferred work counts against the rate limits as each
// piece of it runs. A budget refusal puts its headers on h (may be nil).
func (g Gate) Hold(ctx context.Context, acct billing.Account, model, key string, amount int64, h http.Header) (*Ticket, error) {
	tk := &Ticket{model: model, heldAt: time.Now()}
	if g.Limits != nil {
		tk.Limits = g.Limits.For(subject(acct, model))
	}
	if _, err := g.Reserve(ctx, context.WithoutCancel(ctx), tk, acct, key, amount, h); err != nil {
		return nil, err
	}
	return tk, nil
}

// Keep hands the ticket to the durable record that will end it, maybe in
// another process, with row (may be nil) written with the hand-over: from
// then on the billing sweep leaves its hold alone.
func (tk *Ticket) Keep(row *store.UsageLog) {
	tk.keepPlan()
	tk.Budget.Keep(context.Background())
	tk.mark(row)
	tk.Hold.Keep(row)
}

// Record is what the durable record keeps of the ticket.
func (tk *Ticket) Record() Record {
	h := tk.Hold
	acct := h.Account()
	return Record{Key: h.Key(), Reserved: h.Reserved, UserID: acct.UserID, TokenID: acct.TokenID, Group: acct.Group,
		TeamID: acct.TeamID, OrgID: acct.OrgID, TeamPays: acct.TeamPays, Model: tk.model, HeldNS: tk.heldAt.UnixNano(), Budget: tk.Budget.Amount(), BudgetKeys: tk.Budget.Keys(),
		BudgetOwner: tk.Budget.Owner()}
}

// Restore rebuilds a ticket taken earlier, maybe by another process, from
// its record, so that it can be ended: its hold, and its budget share on
// the periods that are still current.
func (g Gate) Restore(rec Record) *Ticket {
	tk := &Ticket{Hold: g.Billing.RestoreHold(rec.Account(), rec.Key, rec.Reserved), model: rec.Model, heldAt: rec.HeldAt()}
	if g.Limits != nil && rec.Budget > 0 {
		tk.Limits = g.Limits.For(subject(rec.Account(), rec.Model))
		tk.Budget = tk.Limits.Restore(rec.HeldAt(), rec.Budget, rec.Key, rec.BudgetOwner)
	}
	g.restorePlan(tk, rec)
	return tk
}

// SettleNow ends a kept ticket at charge, written synchronously with row
// (may be nil). The budget share is corrected only when this call ended
// the hold, so a ticket ended twice (two nodes, or a retry after a crash)
// moves money and budgets once. It reports whether this call ended it.
func (tk *Ticket) SettleNow(ctx context.Context, charge int64, row *store.UsageLog) (bool, error) {
	tk.mark(row)
	won, err := tk.Hold.SettleNow(ctx, tk.balanceShare(charge), row)
	if won {
		tk.Budget.Settle(ctx, tk.balanceShare(charge))
	}
	tk.endPlan(ctx, won, false, charge)
	return won, err
}

// RefundNow ends a kept ticket by giving it back whole; see SettleNow.
func (tk *Ticket) RefundNow(ctx context.Context, row *store.UsageLog) (bool, error) {
	tk.mark(row)
	won, err := tk.Hold.RefundNow(ctx, row)
	if won {
		tk.Budget.Refund(ctx)
	}
	tk.endPlan(ctx, won, true, 0)
	return won, err
}

// Reserved is what the ticket holds (0 before it holds anything).
func (tk *Ticket) Reserved() int64 {
	if tk.Hold == nil {
		return 0
	}
	return tk.Hold.Reserved
}
