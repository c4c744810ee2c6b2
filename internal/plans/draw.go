package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Spent refuses a call whose covering plans have a spent window while its
// user chose to wait: RetryAfter is until the soonest of those windows
// closes.
type Spent struct {
	PlanID     int64
	Window     int
	ResetsAt   time.Time
	RetryAfter time.Duration
}

func (e *Spent) Error() string {
	return fmt.Sprintf("window %d of plan %d is spent; it closes at %s", e.Window+1, e.PlanID, e.ResetsAt.UTC().Format(time.RFC3339))
}

// Draw is a call's share of one plan: reserved in every window of it,
// settled to the charge or refunded once. A live call's draw is journaled
// under this node (owner) by its hold key from its take until its refund,
// its hand-over to a durable ticket, or the sweep finding its settle
// stored, so that a node dying mid-call leaves a record the sweep ends
// exactly (see Sweep).
type Draw struct {
	s      *Service
	grant  int64
	plan   int64
	starts []int64
	amount int64
	hold   string
	owner  string
	ended  atomic.Bool
}

// Take draws amount from the first of hs (highest priority first) whose
// every window has room, opening the windows that closed, and journals it
// under hold (the call's hold key). When none has room it answers nil and
// no error (the call pays from the balance), or a *Spent when user chose
// to wait.
func (s *Service) Take(ctx context.Context, hs []Held, user, amount int64, hold string) (*Draw, error) {
	amount = max(amount, 0)
	now := s.now()
	var spent *Spent
	for _, h := range hs {
		var j *store.PlanDraw
		if s.node != "" && hold != "" {
			j = &store.PlanDraw{HoldKey: hold, PlanID: h.Plan.ID, Owner: s.node}
		}
		got, err := s.be.take(ctx, h.Grant.ID, takes(h.Plan), now.UnixMilli(), amount, j)
		if err != nil {
			return nil, err
		}
		if got.OK {
			d := &Draw{s: s, grant: h.Grant.ID, plan: h.Plan.ID, starts: got.Starts, amount: amount}
			if j != nil {
				d.hold, d.owner = hold, s.node
			}
			return d, nil
		}
		resets := time.UnixMilli(got.ResetMS)
		if spent == nil || resets.Before(spent.ResetsAt) {
			spent = &Spent{PlanID: h.Plan.ID, Window: got.Spent, ResetsAt: resets, RetryAfter: resets.Sub(now)}
		}
	}
	if spent != nil && s.Waits(user) {
		return nil, spent
	}
	return nil, nil
}

func takes(p *store.Plan) []store.PlanTake {
	out := make([]store.PlanTake, len(p.Windows))
	for i, w := range p.Windows {
		out[i] = store.PlanTake{LengthMS: w.Length().Milliseconds(), Quota: w.Quota}
	}
	return out
}

// Amount is what the draw holds.
func (d *Draw) Amount() int64 { return d.amount }

// Settle turns the held amount into the charge in the windows it was
// taken in (a window that rolled since is left alone). A journaled draw
// stays journaled, as settled at the charge, until the sweep finds its
// hold's settle stored: until then its row may die in the billing
// writer's queue with this process.
//
// A draw a sweep took back meanwhile (this node was taken for dead while
// it ran) moves no window here: it is journaled late, at the charge, and
// the sweep adds the charge once the row is stored, or drops it when the
// row was refused (see Sweep). Its Refund moves nothing either.
func (d *Draw) Settle(ctx context.Context, charge int64) {
	if d == nil || !d.ended.CompareAndSwap(false, true) {
		return
	}
	charge = max(charge, 0)
	d.add(ctx, charge-d.amount, d.mark(store.PlanMark{Counted: charge, PlanID: d.plan, At: d.s.now()}))
}

// Refund gives the held amount back (the call failed), and drops the
// journal record with it.
func (d *Draw) Refund(ctx context.Context) {
	if d == nil || !d.ended.CompareAndSwap(false, true) {
		return
	}
	d.add(ctx, -d.amount, d.mark(store.PlanMark{Drop: true}))
	d.owner = ""
}

// mark addresses m to the draw's journal record (none when unjournaled).
func (d *Draw) mark(m store.PlanMark) store.PlanMark {
	if d.owner == "" {
		return store.PlanMark{}
	}
	m.HoldKey, m.Owner = d.hold, d.owner
	return m
}

func (d *Draw) add(ctx context.Context, delta int64, m store.PlanMark) {
	if delta == 0 && m.HoldKey == "" {
		return
	}
	if err := d.s.be.add(ctx, d.grant, d.starts, delta, m); err != nil {
		d.s.log.Warn("plan window could not be corrected; reconcile shows it", "grant", d.grant, "err", err)
	}
}

// Keep stores the draw of a durable ticket under its hold key, so that
// whichever process ends the ticket ends the draw too; it leaves this
// node's journal in the same hand-over.
func (d *Draw) Keep(ctx context.Context, holdKey string) {
	err := d.s.be.handOver(ctx, store.PlanDraw{HoldKey: holdKey, GrantID: d.grant, PlanID: d.plan, Starts: d.starts, Amount: d.amount, Owner: d.owner})
	if err != nil {
		d.s.log.Warn("plan draw of a durable ticket not stored; a restored ticket would not find it", "key", holdKey, "err", err)
		return
	}
	d.owner = ""
}

// Forget drops the stored draw of an ended durable ticket.
func (d *Draw) Forget(ctx context.Context, holdKey string) {
	if err := d.s.st.DropDraw(ctx, holdKey); err != nil {
		d.s.log.Warn("ended plan draw not dropped", "key", holdKey, "err", err)
	}
}

// Restore reads back the draw a durable ticket kept under holdKey; nil
// when it drew nothing. Without any grant it reads nothing.
func (s *Service) Restore(ctx context.Context, holdKey string) *Draw {
	if s == nil || len(s.snap.Load().byUser) == 0 {
		return nil
	}
	pd, err := s.st.Draw(ctx, holdKey)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("plan draw of a durable ticket not read", "key", holdKey, "err", err)
		}
		return nil
	}
	return &Draw{s: s, grant: pd.GrantID, plan: pd.PlanID, starts: pd.Starts, amount: pd.Amount}
}

// Mark adds other.plan to a usage row's other: the plan, the grant, the
// first window's start (window) and every window's start in Unix
// milliseconds (windows), by which the windows' books find the row.
func (d *Draw) Mark(other json.RawMessage) json.RawMessage {
	b := make([]byte, 0, len(other)+96)
	if len(other) < 2 || other[len(other)-1] != '}' {
		b = append(b, '{')
	} else {
		b = append(b, other[:len(other)-1]...)
		if len(other) > 2 {
			b = append(b, ',')
		}
	}
	b = append(b, store.PlanMarker...)
	b = strconv.AppendInt(b, d.plan, 10)
	b = append(b, `,"grant":`...)
	b = strconv.AppendInt(b, d.grant, 10)
	b = append(b, `,"window":"`...)
	b = time.UnixMilli(d.starts[0]).UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","windows":[`...)
	for i, s := range d.starts {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	return append(b, "]}}"...)
}

// marked is other.plan as the books read it back.
type marked struct {
	Plan *struct {
		ID      int64   `json:"id"`
		Grant   int64   `json:"grant"`
		Windows []int64 `json:"windows"`
	} `json:"plan"`
}
