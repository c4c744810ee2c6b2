package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// planJournalMigration gives the plan draws an owner: a live call's draw
// is journaled in plan_draws under the node that took it, in the
// transaction of its take, so that a node that dies mid-call leaves a
// record the next start (or another node) ends exactly, as billing_holds
// do for balances. settled says the windows count the charge rather than
// the reservation.
var planJournalMigration = Migration{Version: 151, Name: "plan draw journal", SQL: `
ALTER TABLE plan_draws ADD owner {{string}} NOT NULL DEFAULT '';
ALTER TABLE plan_draws ADD settled {{int}} NOT NULL DEFAULT 0;
CREATE INDEX plan_draws_owner_idx ON plan_draws (owner);
`}

// journalDraw records d in tx.
func (r planRepo) journalDraw(ctx context.Context, tx *sql.Tx, d *store.PlanDraw) error {
	starts, err := jsonText(d.Starts)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, r.s.Rebind("INSERT INTO plan_draws (hold_key, grant_id, plan_id, starts, amount, created_at, owner, settled) VALUES (?, ?, ?, ?, ?, ?, ?, 0)"),
		d.HoldKey, d.GrantID, d.PlanID, starts, d.Amount, now(), d.Owner)
	return err
}

// markDraw applies m to its journal entry in tx. found is false when the
// entry is gone because a sweep took the draw back: the windows do not
// count it any more, so they are not corrected, and a settle leaves a late
// entry (settled = 2) at the charge for the sweep to count once its row is
// stored.
func (r planRepo) markDraw(ctx context.Context, tx *sql.Tx, grantID int64, starts []int64, m store.PlanMark) (found bool, err error) {
	var res sql.Result
	switch {
	case m.HoldKey == "":
		return true, nil
	case m.Drop:
		res, err = tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plan_draws WHERE hold_key = ?"), m.HoldKey)
	default:
		res, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE plan_draws SET amount = ?, settled = 1 WHERE hold_key = ? AND settled = 0"), m.Counted, m.HoldKey)
	}
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return true, err
	}
	if m.Drop {
		return false, nil
	}
	return false, r.journalLate(ctx, tx, grantID, starts, m)
}

// journalLate records the late end m of a draw of grantID taken in the
// windows of starts (see store.PlanDraw.Late).
func (r planRepo) journalLate(ctx context.Context, tx *sql.Tx, grantID int64, starts []int64, m store.PlanMark) error {
	text, err := jsonText(starts)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, r.s.Rebind("INSERT INTO plan_draws (hold_key, grant_id, plan_id, starts, amount, created_at, owner, settled) VALUES (?, ?, ?, ?, ?, ?, ?, 2)"),
		m.HoldKey, grantID, m.PlanID, text, m.Counted, dbTime(m.At), m.Owner)
	return err
}

func (r planRepo) Owners(ctx context.Context) ([]string, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT DISTINCT owner FROM plan_draws WHERE owner <> ''")
	if err != nil {
		return nil, wrap(err, "plan draw owners")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (string, error) {
		var o string
		return o, row.Scan(&o)
	})
	return out, wrap(err, "plan draw owners")
}

func (r planRepo) Journal(ctx context.Context, owner string) ([]store.PlanDraw, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT hold_key, grant_id, plan_id, starts, amount, settled, created_at FROM plan_draws WHERE owner = ? ORDER BY hold_key"), owner)
	if err != nil {
		return nil, wrap(err, "plan draw journal")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.PlanDraw, error) {
		d := store.PlanDraw{Owner: owner}
		var starts string
		var settled int
		var at time.Time
		if err := row.Scan(&d.HoldKey, &d.GrantID, &d.PlanID, &starts, &d.Amount, &settled, &at); err != nil {
			return d, err
		}
		d.Settled, d.Late = settled == 1, settled == 2
		if d.Late {
			d.EndedAt = at
		}
		if err := json.Unmarshal([]byte(starts), &d.Starts); err != nil {
			return d, fmt.Errorf("decode plan draw %s: %w", d.HoldKey, err)
		}
		return d, nil
	})
	return out, wrap(err, "plan draw journal")
}

func (r planRepo) Undo(ctx context.Context, d store.PlanDraw) (bool, error) {
	var dropped bool
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plan_draws WHERE hold_key = ? AND owner = ?"), d.HoldKey, d.Owner)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n != 1 {
			return err
		}
		dropped = true
		return r.addWindows(ctx, tx, d.GrantID, d.Starts, -d.Amount)
	})
	return dropped, wrap(err, "undo plan draw")
}

func (r planRepo) MakeLate(ctx context.Context, d store.PlanDraw, at time.Time) (bool, error) {
	var made bool
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE plan_draws SET settled = 2, created_at = ? WHERE hold_key = ? AND owner = ? AND settled = 1"),
			dbTime(at), d.HoldKey, d.Owner)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n != 1 {
			return err
		}
		made = true
		return r.addWindows(ctx, tx, d.GrantID, d.Starts, -d.Amount)
	})
	return made, wrap(err, "make plan draw late")
}
