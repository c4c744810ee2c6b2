package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Take is the database path of a plan draw: the grant's window rows are
// locked, each closed one is reopened at nowMS, and amount is added to
// every one of them only if it fits in all. With the rows locked, nodes
// sharing the database draw exactly. A grant's first draw makes its rows
// first, outside the locking transaction, so concurrent first draws do
// not deadlock on the inserts' gap locks (MySQL).
func (r planRepo) Take(ctx context.Context, grantID int64, wins []store.PlanTake, nowMS, amount int64, journal *store.PlanDraw) (store.PlanTaken, error) {
	out, err := r.take(ctx, grantID, wins, nowMS, amount, journal)
	if errors.Is(err, errNoWindowRows) {
		if err = r.makeWindows(ctx, grantID, len(wins)); err == nil {
			out, err = r.take(ctx, grantID, wins, nowMS, amount, journal)
		}
	}
	return out, wrap(err, "draw from plan")
}

// errNoWindowRows: the grant's window rows are not all made yet.
var errNoWindowRows = errors.New("plan window rows missing")

func (r planRepo) take(ctx context.Context, grantID int64, wins []store.PlanTake, nowMS, amount int64, journal *store.PlanDraw) (store.PlanTaken, error) {
	var out store.PlanTaken
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		out = store.PlanTaken{}
		states, err := r.lockWindows(ctx, tx, grantID, len(wins))
		if err != nil {
			return err
		}
		out.Starts, out.Opened = make([]int64, len(wins)), make([]bool, len(wins))
		for i, w := range wins {
			st := states[i]
			if st.StartMS == 0 || nowMS >= st.StartMS+w.LengthMS {
				st.StartMS, st.Used, out.Opened[i] = nowMS, 0, true
			}
			if st.Used+amount > w.Quota {
				out.Spent, out.ResetMS = i, st.StartMS+w.LengthMS
				return nil
			}
			states[i], out.Starts[i] = st, st.StartMS
		}
		for i := range wins {
			if _, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE plan_windows SET start_ms = ?, used = ? WHERE grant_id = ? AND idx = ?"),
				states[i].StartMS, states[i].Used+amount, grantID, i); err != nil {
				return err
			}
		}
		out.OK = true
		if journal == nil {
			return nil
		}
		journal.GrantID, journal.Starts, journal.Amount = grantID, out.Starts, amount
		return r.journalDraw(ctx, tx, journal)
	})
	return out, err
}

// makeWindows makes a grant's n window rows (never opened) where missing.
func (r planRepo) makeWindows(ctx context.Context, grantID int64, n int) error {
	ins := "INSERT INTO plan_windows (grant_id, idx, start_ms, used) VALUES (?, ?, 0, 0) ON CONFLICT (grant_id, idx) DO NOTHING"
	if r.s.dialect == MySQL {
		ins = "INSERT IGNORE INTO plan_windows (grant_id, idx, start_ms, used) VALUES (?, ?, 0, 0)"
	}
	for i := 0; i < n; i++ {
		if _, err := r.s.db.ExecContext(ctx, r.s.Rebind(ins), grantID, i); err != nil {
			return err
		}
	}
	return nil
}

// lockWindows reads the grant's n window rows locked for the rest of the
// transaction (SQLite locks the whole database at the transaction's first
// write instead).
func (r planRepo) lockWindows(ctx context.Context, tx *sql.Tx, grantID int64, n int) ([]store.PlanWindowState, error) {
	q := "SELECT grant_id, idx, start_ms, used FROM plan_windows WHERE grant_id = ? ORDER BY idx"
	if r.s.dialect != SQLite {
		q += " FOR UPDATE"
	}
	rows, err := tx.QueryContext(ctx, r.s.Rebind(q), grantID)
	if err != nil {
		return nil, err
	}
	states, err := collect(rows, scanWindow)
	if err != nil {
		return nil, err
	}
	if len(states) < n {
		return nil, errNoWindowRows
	}
	return states, nil
}

func scanWindow(row interface{ Scan(...any) error }) (store.PlanWindowState, error) {
	var w store.PlanWindowState
	err := row.Scan(&w.GrantID, &w.Index, &w.StartMS, &w.Used)
	return w, err
}

// Add corrects the windows whose start is still the one the draw was
// taken in; a window that rolled since keeps its new count.
func (r planRepo) Add(ctx context.Context, grantID int64, starts []int64, delta int64, mark store.PlanMark) error {
	if delta == 0 && mark.HoldKey == "" {
		return nil
	}
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		found, err := r.markDraw(ctx, tx, grantID, starts, mark)
		if err != nil || !found {
			return err
		}
		return r.addWindows(ctx, tx, grantID, starts, delta)
	})
	return wrap(err, "correct plan window")
}

func (r planRepo) addWindows(ctx context.Context, tx *sql.Tx, grantID int64, starts []int64, delta int64) error {
	if delta == 0 {
		return nil
	}
	for i, s := range starts {
		if _, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE plan_windows SET used = used + ? WHERE grant_id = ? AND idx = ? AND start_ms = ?"),
			delta, grantID, i, s); err != nil {
			return err
		}
	}
	return nil
}

func (r planRepo) Windows(ctx context.Context, grantID int64) ([]store.PlanWindowState, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT grant_id, idx, start_ms, used FROM plan_windows WHERE grant_id = ? ORDER BY idx"), grantID)
	if err != nil {
		return nil, wrap(err, "plan windows")
	}
	out, err := collect(rows, scanWindow)
	return out, wrap(err, "plan windows")
}

// Rows finds a grant's rows by the marker their other starts other.plan
// with; the caller reads other.plan itself, so a match of the pattern
// inside a string of other counts for nothing.
func (r planRepo) Rows(ctx context.Context, grantID int64, since time.Time) ([]store.PlanRow, error) {
	pattern := "%" + store.PlanMarker + "%,\"grant\":" + fmt.Sprint(grantID) + ",%"
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT type, quota, other, created_at FROM usage_logs WHERE created_at >= ? AND other LIKE ? ORDER BY id"),
		dbTime(since), pattern)
	if err != nil {
		return nil, wrap(err, "plan rows")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.PlanRow, error) {
		var p store.PlanRow
		var other sql.NullString
		err := row.Scan(&p.Type, &p.Quota, &other, &p.CreatedAt)
		p.Other, p.CreatedAt = rawFrom(other), p.CreatedAt.UTC()
		return p, err
	})
	return out, wrap(err, "plan rows")
}

// event records a Stripe event as applied inside tx; false when it was
// applied before.
func (r planRepo) event(ctx context.Context, tx *sql.Tx, id string) (bool, error) {
	ins := "INSERT INTO plan_events (event_id, created_at) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING"
	if r.s.dialect == MySQL {
		ins = "INSERT IGNORE INTO plan_events (event_id, created_at) VALUES (?, ?)"
	}
	res, err := tx.ExecContext(ctx, r.s.Rebind(ins), id, now())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (r planRepo) Renew(ctx context.Context, s store.PlanSubscription) (bool, error) {
	var applied bool
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		if applied, err = r.event(ctx, tx, s.EventID); err != nil || !applied {
			return err
		}
		var id int64
		var until time.Time
		err = tx.QueryRowContext(ctx, r.s.Rebind("SELECT id, until_at FROM plan_grants WHERE subscription = ? AND source = ?"), s.Subscription, store.GrantStripe).Scan(&id, &until)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if s.UserID == 0 || s.PlanID == 0 {
				return fmt.Errorf("subscription %s names no user and plan: %w", s.Subscription, store.ErrNotFound)
			}
			_, err = tx.ExecContext(ctx, r.s.Rebind("INSERT INTO plan_grants (user_id, plan_id, until_at, source, subscription, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
				s.UserID, s.PlanID, dbTime(s.Until), store.GrantStripe, s.Subscription, now())
			return err
		case err != nil:
			return err
		case s.Until.After(until):
			_, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE plan_grants SET until_at = ? WHERE id = ?"), dbTime(s.Until), id)
			return err
		}
		return nil
	})
	return applied, wrap(err, "renew plan")
}

func (r planRepo) End(ctx context.Context, s store.PlanSubscription) (bool, error) {
	var applied bool
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		if applied, err = r.event(ctx, tx, s.EventID); err != nil || !applied {
			return err
		}
		_, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE plan_grants SET until_at = ? WHERE subscription = ? AND source = ?"),
			dbTime(s.Until), s.Subscription, store.GrantStripe)
		return err
	})
	return applied, wrap(err, "end plan")
}

func (r planRepo) KeepDraw(ctx context.Context, d store.PlanDraw) error {
	starts, err := jsonText(d.Starts)
	if err != nil {
		return err
	}
	// A live draw journaled under its node becomes the durable ticket's:
	// no owner, so no sweep ends it behind the record that will.
	_, err = r.s.db.ExecContext(ctx, r.s.upsertSQL("plan_draws", "hold_key", []string{"grant_id", "plan_id", "starts", "amount", "created_at", "owner", "settled"}),
		d.HoldKey, d.GrantID, d.PlanID, starts, d.Amount, now(), "", 0)
	return wrap(err, "keep plan draw")
}

func (r planRepo) Draw(ctx context.Context, holdKey string) (*store.PlanDraw, error) {
	d := store.PlanDraw{HoldKey: holdKey}
	var starts string
	// Only a durable ticket's record (no owner): a live draw journaled
	// under its node is the plan sweep's to end, never a restored ticket's.
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT grant_id, plan_id, starts, amount FROM plan_draws WHERE hold_key = ? AND owner = ''"), holdKey).
		Scan(&d.GrantID, &d.PlanID, &starts, &d.Amount)
	if err != nil {
		return nil, wrap(err, "plan draw")
	}
	if err := json.Unmarshal([]byte(starts), &d.Starts); err != nil {
		return nil, fmt.Errorf("decode plan draw: %w", err)
	}
	return &d, nil
}

func (r planRepo) DropDraw(ctx context.Context, holdKey string) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM plan_draws WHERE hold_key = ?"), holdKey)
	return wrap(err, "drop plan draw")
}
