package sqlstore

import (
	"context"

	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type booksRepo struct{ s *Store }

// Books reads the usage log and the ledger for the operator's reports.
func (s *Store) Books() store.BooksRepo { return booksRepo{s} }

// booksPage is how many rows one page of a report's reading holds: large
// enough that a day of a busy gateway is a few thousand round trips, small
// enough that a page is never a memory problem.
var booksPage = 2000

// EachLog reads the window in pages after the last row seen, in
// (created_at, id) order through the created_at index, so no cursor stays
// open while fn works. The page starts at the last row seen in the index's
// condition: paged by id after a filter on the window, every page made
// the database read and sort the whole window again (at 10 million rows,
// 1-4 s a page of a 30-day window).
func (r booksRepo) EachLog(ctx context.Context, w store.Window, types []string, fn func(store.UsageLog) error) error {
	return r.eachLogPage(ctx, "created_at < ?", []any{dbTime(w.Until)}, w, types, "read logs", fn)
}

// eachLogPage reads the rows of where (with args) in the window, of types
// when given, in (created_at, id) pages. The page starts at the last row
// seen in the index's condition (created_at >= at), not only in a filter:
// a filter would make every page read the window's rows before it again.
func (r booksRepo) eachLogPage(ctx context.Context, where string, args []any, w store.Window, types []string, what string, fn func(store.UsageLog) error) error {
	if len(types) > 0 {
		where += " AND type IN (?" + strings.Repeat(", ?", len(types)-1) + ")"
		for _, t := range types {
			args = append(args, t)
		}
	}
	q := r.s.Rebind(logSelect + " WHERE " + where + " AND created_at >= ? AND (created_at > ? OR id > ?) ORDER BY created_at, id LIMIT ?")
	at, after := dbTime(w.Since), int64(0)
	for {
		rows, err := r.s.db.QueryContext(ctx, q, append(args, at, at, after, booksPage)...)
		if err != nil {
			return wrap(err, what)
		}
		page, err := collect(rows, scanLog)
		if err != nil {
			return wrap(err, what)
		}
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
			at, after = dbTime(l.CreatedAt), l.ID
		}
		if len(page) < booksPage {
			return nil
		}
	}
}

// taskRow tells a task's row by its other, which the server writes
// (admission.MarshalOther): a client's text in it is a JSON string, whose
// quotes are escaped, so it cannot spell the member.
const taskRow = `CASE WHEN other LIKE '%"surface":"task"%' THEN 1 ELSE 0 END`

// teamPaid is the team whose shared balance a row moved, 0 for the user's
// own (see store.TeamPaidMarker); its pattern is a bound argument.
const teamPaid = "CASE WHEN other LIKE ? THEN team_id ELSE 0 END"

// LogTotals is one aggregate over the window's rows.
func (r booksRepo) LogTotals(ctx context.Context, w store.Window) ([]store.LogTotal, error) {
	q := "SELECT user_id, token_id, type, " + taskRow + ", " + r.s.castInt("COUNT(*)") + ", " + r.s.castInt("COALESCE(SUM(CASE WHEN other LIKE ? THEN 0 ELSE quota END), 0)") +
		", " + teamPaid + " FROM usage_logs WHERE created_at >= ? AND created_at < ? GROUP BY 1, 2, 3, 4, 7"
	// A row that drew from a plan (its other.plan) moved no balance: its
	// quota is the plan's, proved by the plan windows' books.
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(q), "%"+store.PlanMarker+"%", "%"+store.TeamPaidMarker+"%", dbTime(w.Since), dbTime(w.Until))
	if err != nil {
		return nil, wrap(err, "sum logs")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.LogTotal, error) {
		var t store.LogTotal
		var task int
		err := row.Scan(&t.UserID, &t.TokenID, &t.Type, &task, &t.Rows, &t.Quota, &t.Team)
		t.Task = task == 1
		return t, err
	})
	return out, wrap(err, "sum logs")
}

// EachEntry reads in (created_at, id) order, a page at a time after the
// last entry seen.
func (r booksRepo) EachEntry(ctx context.Context, since time.Time, fn func(store.LedgerEntry) error) error {
	// The page starts at the last entry seen in the index's condition
	// (created_at >= at): with since there, every page read all the
	// entries before it again.
	q := r.s.Rebind("SELECT id, " + ledgerColumns + " FROM quota_ledger WHERE created_at >= ? AND (created_at > ? OR id > ?)" +
		" ORDER BY created_at, id LIMIT ?")
	at, after := dbTime(since), int64(0)
	for {
		rows, err := r.s.db.QueryContext(ctx, q, at, at, after, booksPage)
		if err != nil {
			return wrap(err, "read ledger")
		}
		page, err := collect(rows, scanEntry)
		if err != nil {
			return wrap(err, "read ledger")
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
			at, after = dbTime(e.CreatedAt), e.ID
		}
		if len(page) < booksPage {
			return nil
		}
	}
}

// BalancesBefore is two aggregates over the ledger's older entries.
func (r booksRepo) BalancesBefore(ctx context.Context, t time.Time) (users, tokens map[int64]int64, err error) {
	if users, err = r.sumBefore(ctx, t, "user_id", "delta", " AND team_id = 0"); err != nil {
		return nil, nil, wrap(err, "sum ledger")
	}
	tokens, err = r.sumBefore(ctx, t, "token_id", "token_delta", "")
	return users, tokens, wrap(err, "sum ledger")
}

// TeamsBefore sums the entries of teams' shared balances.
func (r booksRepo) TeamsBefore(ctx context.Context, t time.Time) (map[int64]int64, error) {
	teams, err := r.sumBefore(ctx, t, "team_id", "delta", "")
	return teams, wrap(err, "sum ledger")
}

// sumBefore sums amount per col over the entries before t that match
// the condition also.
func (r booksRepo) sumBefore(ctx context.Context, t time.Time, col, amount, also string) (map[int64]int64, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT "+col+", "+r.s.castInt("COALESCE(SUM("+amount+"), 0)")+
		" FROM quota_ledger WHERE created_at < ? AND "+col+" <> 0"+also+" GROUP BY "+col), dbTime(t))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		out[id] = v
	}
	return out, rows.Err()
}

// UserDrift subtracts in the database, so both figures are of one moment.
// Entries of a team's shared balance name the member but moved the team.
func (r booksRepo) UserDrift(ctx context.Context, userID int64) (int64, error) {
	q := "SELECT " + r.s.castInt("quota - COALESCE((SELECT SUM(delta) FROM quota_ledger WHERE user_id = ? AND team_id = 0), 0)") + " FROM users WHERE id = ?"
	var d int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind(q), userID, userID).Scan(&d)
	return d, wrap(err, "user drift")
}

// TeamDrift is UserDrift of a team's shared balance.
func (r booksRepo) TeamDrift(ctx context.Context, teamID int64) (int64, error) {
	q := "SELECT " + r.s.castInt("quota - COALESCE((SELECT SUM(delta) FROM quota_ledger WHERE team_id = ?), 0)") + " FROM teams WHERE id = ?"
	var d int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind(q), teamID, teamID).Scan(&d)
	return d, wrap(err, "team drift")
}

// TokenBalanceAt reads the balance and the later movements in one
// statement, so both figures are of one moment.
func (r booksRepo) TokenBalanceAt(ctx context.Context, tokenID int64, t time.Time) (int64, bool, error) {
	q := "SELECT quota, " + r.s.castInt("COALESCE((SELECT SUM(token_delta) FROM quota_ledger WHERE token_id = ? AND created_at >= ?), 0)") +
		" FROM tokens WHERE id = ?"
	var quota, later int64
	if err := r.s.db.QueryRowContext(ctx, r.s.Rebind(q), tokenID, dbTime(t), tokenID).Scan(&quota, &later); err != nil {
		return 0, false, wrap(err, "token balance")
	}
	if quota < 0 {
		return 0, false, nil
	}
	return quota - later, true, nil
}

// castInt makes an aggregate scan as an integer on every dialect
// (PostgreSQL sums bigints to numeric, MySQL to decimal).
func (s *Store) castInt(expr string) string {
	switch s.dialect {
	case Postgres:
		return "CAST(" + expr + " AS BIGINT)"
	case MySQL:
		return "CAST(" + expr + " AS SIGNED)"
	}
	return expr
}

func scanEntry(row interface{ Scan(...any) error }) (store.LedgerEntry, error) {
	var e store.LedgerEntry
	err := row.Scan(&e.ID, &e.Key, &e.Kind, &e.UserID, &e.TokenID, &e.Delta, &e.TokenDelta, &e.Used, &e.CreatedAt, &e.TeamID)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err
}
