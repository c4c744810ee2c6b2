package sqlstore

import (
	"context"
	"fmt"

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

// logTotalsRaw is one aggregate over the window's rows, for the time
// the backfill has not yet folded them all into their books buckets.
// scanLogTotal reads one line of the usage totals, from the raw rows or
// from the books buckets alike: user, key, type, task flag, rows, quota,
// paying team.
func scanLogTotal(row interface{ Scan(...any) error }) (store.LogTotal, error) {
	var t store.LogTotal
	var task int
	err := row.Scan(&t.UserID, &t.TokenID, &t.Type, &task, &t.Rows, &t.Quota, &t.Team)
	t.Task = task == 1
	return t, err
}

func (r booksRepo) logTotalsRaw(ctx context.Context, w store.Window) ([]store.LogTotal, error) {
	q := "SELECT user_id, token_id, type, " + taskRow + ", " + r.s.castInt("COUNT(*)") + ", " + r.s.castInt("COALESCE(SUM(CASE WHEN other LIKE ? THEN 0 ELSE quota END), 0)") +
		", " + teamPaid + " FROM usage_logs WHERE created_at >= ? AND created_at < ? GROUP BY 1, 2, 3, 4, 7"
	// A row that drew from a plan (its other.plan) moved no balance: its
	// quota is the plan's, proved by the plan windows' books.
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(q), "%"+store.PlanMarker+"%", "%"+store.TeamPaidMarker+"%", dbTime(w.Since), dbTime(w.Until))
	if err != nil {
		return nil, wrap(err, "sum logs")
	}
	out, err := collect(rows, scanLogTotal)
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

// BalancesBefore folds the books rollups of the entries before t.
func (r booksRepo) BalancesBefore(ctx context.Context, t time.Time) (users, tokens map[int64]int64, err error) {
	totals, err := r.LedgerTotals(ctx, store.Window{Until: t})
	if err != nil {
		return nil, nil, err
	}
	users, tokens = map[int64]int64{}, map[int64]int64{}
	for _, s := range totals {
		if s.UserID != 0 && s.TeamID == 0 {
			users[s.UserID] += s.Delta
		}
		if s.TokenID != 0 {
			tokens[s.TokenID] += s.TokenDelta
		}
	}
	return users, tokens, nil
}

// TeamsBefore sums the entries of teams' shared balances.
func (r booksRepo) TeamsBefore(ctx context.Context, t time.Time) (map[int64]int64, error) {
	totals, err := r.LedgerTotals(ctx, store.Window{Until: t})
	if err != nil {
		return nil, err
	}
	teams := map[int64]int64{}
	for _, s := range totals {
		if s.TeamID != 0 {
			teams[s.TeamID] += s.Delta
		}
	}
	return teams, nil
}

// nameColumns are the table and name column of a report's groups.
var nameColumns = map[string][2]string{"channel": {"channels", "name"}, "user": {"users", "username"}, "token": {"tokens", "name"}}

// Names reads the names of a report's groups 500 ids a statement: one
// query per group made the margin report by key 400 round trips.
func (r booksRepo) Names(ctx context.Context, by string, ids []int64) (map[int64]string, error) {
	tc, ok := nameColumns[by]
	if !ok {
		return nil, fmt.Errorf("no names of %q", by)
	}
	out := map[int64]string{}
	for lo := 0; lo < len(ids); lo += 500 {
		part := ids[lo:min(lo+500, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT id, "+tc[1]+" FROM "+tc[0]+" WHERE id IN (?"+strings.Repeat(", ?", len(part)-1)+")"), args...)
		if err != nil {
			return nil, wrap(err, "read names")
		}
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return nil, wrap(err, "read names")
			}
			out[id] = name
		}
		if err := rows.Close(); err != nil {
			return nil, wrap(err, "read names")
		}
	}
	return out, nil
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
