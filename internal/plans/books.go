package plans

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// windowsFromRows is the truth of a grant's windows at nowMS: per window,
// the latest start its rows name, if that window is still open, and what
// those rows drew in it (consumes less refunds).
func windowsFromRows(ctx context.Context, st store.PlanRepo, grant int64, wins []store.PlanTake, nowMS int64) ([]store.PlanWindowState, error) {
	var longest int64
	for _, w := range wins {
		longest = max(longest, w.LengthMS)
	}
	rows, err := st.Rows(ctx, grant, time.UnixMilli(nowMS-longest))
	if err != nil {
		return nil, err
	}
	sums := drawn(rows, grant, len(wins))
	out := make([]store.PlanWindowState, len(wins))
	for i, w := range wins {
		out[i] = store.PlanWindowState{GrantID: grant, Index: i}
		for start, used := range sums[i] {
			if start > out[i].StartMS && nowMS < start+w.LengthMS {
				out[i].StartMS, out[i].Used = start, used
			}
		}
	}
	return out, nil
}

// drawn sums a grant's rows per window and start.
func drawn(rows []store.PlanRow, grant int64, n int) []map[int64]int64 {
	sums := make([]map[int64]int64, n)
	for i := range sums {
		sums[i] = map[int64]int64{}
	}
	for _, r := range rows {
		var m marked
		if json.Unmarshal(r.Other, &m) != nil || m.Plan == nil || m.Plan.Grant != grant {
			continue
		}
		var v int64
		switch r.Type {
		case store.LogConsume:
			v = r.Quota
		case store.LogRefund:
			v = -r.Quota
		}
		for i, s := range m.Plan.Windows {
			if i < n {
				sums[i][s] += v
			}
		}
	}
	return sums
}

// WindowBooks is one open window's books: what its live count says, what
// the rows drawn in it sum to, what the draws still open in it hold (live
// calls journaled by their nodes, durable tickets), what the settled
// draws whose settle the sweep has not yet seen stored count (their rows
// may or may not be written yet), and what the late draws owe it (ended
// by a node after a sweep took them back: their rows may count them
// before the sweep does).
type WindowBooks struct {
	UserID   int64     `json:"user_id"`
	PlanID   int64     `json:"plan_id"`
	GrantID  int64     `json:"grant_id"`
	Window   int       `json:"window"`
	Start    time.Time `json:"start"`
	Live     int64     `json:"live"`
	RowsSum  int64     `json:"rows_sum"`
	Open     int64     `json:"open_draws"`
	Settling int64     `json:"settling_draws"`
	Late     int64     `json:"late_draws,omitempty"`
	OK       bool      `json:"ok"`
	Message  string    `json:"message,omitempty"`
}

// Reconcile proves every open window of every grant in force: its live
// count equals the sum of the plan-drawn rows in it plus the draws still
// open in it (a dead node's among them until the sweep ends them), plus
// at most what settled draws not yet trimmed count (their rows may still
// be queued), less at most what late draws owe it (their rows may be
// stored before the sweep counts them). Calls moving while it reads may put a window ahead of that
// while its user has billing holds open (open says so; nil: never).
func (s *Service) Reconcile(ctx context.Context, open func(user int64) bool) ([]WindowBooks, error) {
	grants, err := s.st.Grants(ctx, 0, s.now())
	if err != nil {
		return nil, err
	}
	plans, err := s.st.List(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*store.Plan{}
	for i := range plans {
		byID[plans[i].ID] = &plans[i]
	}
	draws, err := s.openDraws(ctx)
	if err != nil {
		return nil, err
	}
	out := []WindowBooks{}
	nowMS := s.now().UnixMilli()
	for _, g := range grants {
		p := byID[g.PlanID]
		if p == nil {
			continue
		}
		books, err := s.grantBooks(ctx, g, p, nowMS, open != nil && open(g.UserID), draws)
		if err != nil {
			return nil, err
		}
		out = append(out, books...)
	}
	return out, nil
}

// drawSums are the open draws' counts per grant, window and start:
// reserved ones (open), settled ones still journaled (settling) and late
// ones (what they owe).
type drawSums struct{ open, settling, late map[int64][]map[int64]int64 }

func (d drawSums) at(m map[int64][]map[int64]int64, grant int64, i int, start int64) int64 {
	if i < len(m[grant]) {
		return m[grant][i][start]
	}
	return 0
}

// openDraws sums the draws still open: every node's journal and the
// durable tickets' records.
func (s *Service) openDraws(ctx context.Context) (drawSums, error) {
	out := drawSums{open: map[int64][]map[int64]int64{}, settling: map[int64][]map[int64]int64{}, late: map[int64][]map[int64]int64{}}
	all, err := s.st.Journal(ctx, "")
	if err != nil {
		return out, err
	}
	owners, err := s.be.owners(ctx)
	if err != nil {
		return out, err
	}
	for _, o := range owners {
		ds, err := s.be.journal(ctx, o)
		if err != nil {
			return out, err
		}
		all = append(all, ds...)
	}
	for _, d := range all {
		m := out.open
		switch {
		case d.Late:
			m = out.late
		case d.Settled:
			m = out.settling
		}
		for len(m[d.GrantID]) < len(d.Starts) {
			m[d.GrantID] = append(m[d.GrantID], map[int64]int64{})
		}
		for i, st := range d.Starts {
			m[d.GrantID][i][st] += d.Amount
		}
	}
	return out, nil
}

func (s *Service) grantBooks(ctx context.Context, g store.PlanGrant, p *store.Plan, nowMS int64, inFlight bool, draws drawSums) ([]WindowBooks, error) {
	wins := takes(p)
	live, err := s.be.live(ctx, g.ID, len(wins))
	if err != nil {
		return nil, err
	}
	rows, err := s.st.Rows(ctx, g.ID, time.UnixMilli(nowMS-lifetime(wins)))
	if err != nil {
		return nil, err
	}
	sums := drawn(rows, g.ID, len(wins))
	var out []WindowBooks
	for i, w := range live {
		if w.StartMS == 0 || nowMS >= w.StartMS+wins[i].LengthMS {
			continue // closed: never read again
		}
		b := WindowBooks{UserID: g.UserID, PlanID: p.ID, GrantID: g.ID, Window: i, Start: time.UnixMilli(w.StartMS).UTC(),
			Live: w.Used, RowsSum: sums[i][w.StartMS], OK: true}
		b.Open, b.Settling = draws.at(draws.open, g.ID, i, w.StartMS), draws.at(draws.settling, g.ID, i, w.StartMS)
		b.Late = draws.at(draws.late, g.ID, i, w.StartMS)
		if want := b.RowsSum + b.Open; !windowAgrees(b.Live, want, b, inFlight) {
			b.OK = false
			b.Message = fmt.Sprintf("user %d, plan %d, window %d opened %s: the window counts %d drawn but its usage rows sum to %d and its open draws to %d",
				g.UserID, p.ID, i+1, b.Start.Format(time.RFC3339), b.Live, b.RowsSum, b.Open)
		}
		out = append(out, b)
	}
	return out, nil
}

// windowAgrees: the live count is the rows and open draws (want), up to
// the settling draws above it (or anything above while calls move), down
// to the late draws below it.
func windowAgrees(live, want int64, b WindowBooks, inFlight bool) bool {
	switch {
	case live > want:
		return live <= want+b.Settling || inFlight
	case live < want:
		return live >= want-b.Late
	}
	return true
}

// WindowUse is one window of a held plan as its holder sees it.
type WindowUse struct {
	Minutes  int64      `json:"minutes,omitempty"`
	Hours    int64      `json:"hours,omitempty"`
	Days     int64      `json:"days,omitempty"`
	Quota    int64      `json:"quota"`
	Used     int64      `json:"used"`
	ResetsAt *time.Time `json:"resets_at"`
}

// HeldPlan is a plan a user holds, with every window's use.
type HeldPlan struct {
	GrantID  int64       `json:"grant_id"`
	PlanID   int64       `json:"plan_id"`
	Name     string      `json:"name"`
	Priority int         `json:"priority"`
	Until    time.Time   `json:"until"`
	Source   string      `json:"source"`
	Models   []string    `json:"models"`
	Groups   []string    `json:"groups"`
	Windows  []WindowUse `json:"windows"`
}

// Usage is every plan user holds now with each window's use: a window not
// open (never, or closed) shows 0 used and no reset time, since it opens
// at the next call.
func (s *Service) Usage(ctx context.Context, user int64) ([]HeldPlan, error) {
	grants, err := s.st.Grants(ctx, user, s.now())
	if err != nil {
		return nil, err
	}
	out := []HeldPlan{}
	nowMS := s.now().UnixMilli()
	for _, g := range grants {
		p, err := s.st.Get(ctx, g.PlanID)
		if err != nil {
			continue // deleted meanwhile
		}
		live, err := s.be.live(ctx, g.ID, len(p.Windows))
		if err != nil {
			return nil, err
		}
		hp := HeldPlan{GrantID: g.ID, PlanID: p.ID, Name: p.Name, Priority: p.Priority, Until: g.Until, Source: g.Source,
			Models: p.Models, Groups: p.Groups, Windows: make([]WindowUse, len(p.Windows))}
		for i, w := range p.Windows {
			u := WindowUse{Minutes: w.Minutes, Hours: w.Hours, Days: w.Days, Quota: w.Quota}
			if st := live[i]; st.StartMS != 0 && nowMS < st.StartMS+w.Length().Milliseconds() {
				r := time.UnixMilli(st.StartMS).Add(w.Length()).UTC()
				u.Used, u.ResetsAt = st.Used, &r
			}
			hp.Windows[i] = u
		}
		out = append(out, hp)
	}
	return out, nil
}
