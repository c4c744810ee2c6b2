package store

import (
	"context"
	"encoding/json"
	"time"
)

// Plan is a subscription the root defines (CONTRACT §18): rolling windows
// of quota over the models and groups it covers.
type Plan struct {
	ID       int64        `json:"id"`
	Name     string       `json:"name"`
	PriceUSD float64      `json:"price_usd"`
	Period   string       `json:"period"`
	Windows  []PlanWindow `json:"windows"`
	Models   []string     `json:"models"`
	Groups   []string     `json:"groups"`
	Priority int          `json:"priority"`
	// CreatedAt and UpdatedAt are the row's.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PlanWindow is one rolling window of a plan: its length in one of minutes,
// hours or days, and the quota a holder may draw in it.
type PlanWindow struct {
	Minutes int64 `json:"minutes,omitempty"`
	Hours   int64 `json:"hours,omitempty"`
	Days    int64 `json:"days,omitempty"`
	Quota   int64 `json:"quota"`
}

// Length is how long the window lasts once opened.
func (w PlanWindow) Length() time.Duration {
	return time.Duration(w.Minutes)*time.Minute + time.Duration(w.Hours)*time.Hour + time.Duration(w.Days)*24*time.Hour
}

// PlanGrant is a user's holding of a plan until a time: an admin grant, or
// a Stripe subscription (Subscription is its id) renewed by each paid
// invoice.
type PlanGrant struct {
	ID           int64     `json:"id"`
	UserID       int64     `json:"user_id"`
	PlanID       int64     `json:"plan_id"`
	Until        time.Time `json:"until"`
	Source       string    `json:"source"`
	Subscription string    `json:"subscription,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// Grant sources.
const (
	GrantAdmin  = "admin"
	GrantStripe = "stripe"
)

// PlanWindowState is one window of a grant as the database path keeps it:
// when it opened (Unix milliseconds) and what was drawn in it.
type PlanWindowState struct {
	GrantID int64 `json:"grant_id"`
	Index   int   `json:"index"`
	StartMS int64 `json:"start_ms"`
	Used    int64 `json:"used"`
}

// PlanTake is one window a draw must fit in: its length and quota.
type PlanTake struct {
	LengthMS int64
	Quota    int64
}

// PlanTaken is what a draw found: Starts are the windows' starts when it
// fitted; otherwise Spent is the first window it did not fit in and
// ResetMS when that window closes.
type PlanTaken struct {
	OK      bool
	Starts  []int64
	Opened  []bool
	Spent   int
	ResetMS int64
}

// PlanRow is a usage row that drew from a plan, as reconciliation reads it.
type PlanRow struct {
	Type      string
	Quota     int64
	Other     json.RawMessage
	CreatedAt time.Time
}

// PlanDraw is a plan share a call holds: which grant, the windows' starts
// it was taken in and the amount they count for it. A live call's draw is
// journaled under the node that took it (Owner) from its take until its
// row is in the billing writer's hands, so that a node that dies mid-call
// leaves a record another node ends exactly (see plans.Service.Sweep); a
// durable ticket's draw has no owner. Settled says the windows count the
// charge (Amount) rather than the reservation.
//
// Late is a draw its owner ended after a sweep had taken it back (the
// owner was taken for dead while it ran): the windows count none of it,
// and they owe it the charge (Amount) once its row is stored; EndedAt is
// when the owner ended it.
type PlanDraw struct {
	HoldKey string
	GrantID int64
	PlanID  int64
	Starts  []int64
	Amount  int64
	Owner   string
	Settled bool
	Late    bool
	EndedAt time.Time
}

// PlanMark is what a window correction does to the journal entry of its
// draw in the same step: nothing (HoldKey empty), drop it, or mark it
// settled at Counted. Owner names the journal where it is kept per node
// (Redis); the database finds the entry by its hold key alone.
//
// When the entry is gone (a sweep took the draw back) the correction moves
// no window: a drop is done, and a settle leaves a late entry (see
// PlanDraw.Late) of plan PlanID at Counted, ended at At.
type PlanMark struct {
	HoldKey string
	Owner   string
	Counted int64
	Drop    bool
	PlanID  int64
	At      time.Time
}

// PlanSubscription is a Stripe event's effect on a subscription grant.
type PlanSubscription struct {
	EventID      string
	Subscription string
	UserID       int64
	PlanID       int64
	Until        time.Time
}

// PlanRepo stores plans, grants, users' overflow settings, the windows of
// the database path and the subscription events applied.
type PlanRepo interface {
	List(ctx context.Context) ([]Plan, error)
	Get(ctx context.Context, id int64) (*Plan, error)
	Create(ctx context.Context, p *Plan) error
	Update(ctx context.Context, p *Plan) error
	Delete(ctx context.Context, id int64) error

	// Grants lists a user's grants (userID 0: every user's) that end after
	// since.
	Grants(ctx context.Context, userID int64, since time.Time) ([]PlanGrant, error)
	AddGrant(ctx context.Context, g *PlanGrant) error
	// DeleteGrant removes a user's grant (ErrNotFound when it is not one).
	DeleteGrant(ctx context.Context, userID, grantID int64) error

	// Overflows are the users whose plan_overflow is not the default.
	Overflows(ctx context.Context) (map[int64]string, error)
	SetOverflow(ctx context.Context, userID int64, mode string) error

	// Take reserves amount in every window of a grant in one transaction,
	// opening those that closed by nowMS, or takes nothing. journal (nil:
	// none) is recorded in the same transaction when the draw fits, with
	// the starts and amount filled in.
	Take(ctx context.Context, grantID int64, wins []PlanTake, nowMS, amount int64, journal *PlanDraw) (PlanTaken, error)
	// Add moves the windows that still have the given starts by delta and
	// applies mark to the draw's journal entry, in one transaction; when
	// the mark's entry is gone it moves nothing and leaves a late entry
	// for a settle (see PlanMark).
	Add(ctx context.Context, grantID int64, starts []int64, delta int64, mark PlanMark) error
	Windows(ctx context.Context, grantID int64) ([]PlanWindowState, error)

	// KeepDraw stores the draw a durable ticket holds (taking it out of a
	// node's journal); Draw reads it back (ErrNotFound: the hold drew
	// nothing, or its draw is still a node's) and DropDraw forgets it once
	// ended.
	KeepDraw(ctx context.Context, d PlanDraw) error
	Draw(ctx context.Context, holdKey string) (*PlanDraw, error)
	DropDraw(ctx context.Context, holdKey string) error
	// Owners are the nodes with journaled draws; Journal lists one's.
	Owners(ctx context.Context) ([]string, error)
	Journal(ctx context.Context, owner string) ([]PlanDraw, error)
	// Undo drops the journaled draw d (by its hold key and owner) and, if
	// this call dropped it, takes d.Amount back from the windows that
	// still have its starts, in one transaction. It reports whether it
	// dropped it.
	Undo(ctx context.Context, d PlanDraw) (bool, error)
	// MakeLate turns the settled journaled draw d into a late one ended at
	// at, taking d.Amount back from the windows that still have its
	// starts, in one transaction; it reports whether d was still settled
	// there (see PlanDraw.Late).
	MakeLate(ctx context.Context, d PlanDraw, at time.Time) (bool, error)

	// Rows are the usage rows that drew from a grant since a time.
	Rows(ctx context.Context, grantID int64, since time.Time) ([]PlanRow, error)

	// Renew applies a paid invoice once (by its event id): the
	// subscription's grant is made or its until moved. It reports whether
	// this call applied it.
	Renew(ctx context.Context, s PlanSubscription) (bool, error)
	// End applies a subscription's end once: its grant ends at s.Until.
	End(ctx context.Context, s PlanSubscription) (bool, error)
}

// PlanMarker starts the other.plan object of a row that drew from a plan:
// reconciliation finds the rows of a grant by it.
const PlanMarker = `"plan":{"id":`
