package sqlstore

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// The books are read as spans of the window: its whole UTC days from the
// daily buckets (and the entries and rows of those days still marked for
// the catch-up, which no bucket holds yet), its cut days from the entries
// and rows themselves. The spans are one statement, so one snapshot: the
// buckets and the raw parts agree while the billing writer adds to both.

// daySpan splits [since, until) into its whole days [from, to) and the
// raw parts before and after them. A zero since or until is unbounded;
// whole is false when no whole day fits (then raw is the window).
func daySpan(since, until time.Time) (from, to time.Time, whole bool, raw []store.Window) {
	from, to = since, until
	if !since.IsZero() {
		from = since.Truncate(24 * time.Hour)
		if from.Before(since) {
			from = from.Add(24 * time.Hour)
		}
	}
	if !until.IsZero() {
		to = until.Truncate(24 * time.Hour)
	}
	if !since.IsZero() && !until.IsZero() && !from.Before(to) {
		return from, to, false, []store.Window{{Since: since, Until: until}}
	}
	if !since.IsZero() && since.Before(from) {
		raw = append(raw, store.Window{Since: since, Until: from})
	}
	if !until.IsZero() && to.Before(until) {
		raw = append(raw, store.Window{Since: to, Until: until})
	}
	return from, to, true, raw
}

// rangeWhere is col's condition for [since, until), either end unbounded
// when zero.
func rangeWhere(col string, since, until time.Time) (string, []any) {
	where, args := "1 = 1", []any{}
	if !since.IsZero() {
		where, args = col+" >= ?", append(args, dbTime(since))
	}
	if !until.IsZero() {
		where, args = where+" AND "+col+" < ?", append(args, dbTime(until))
	}
	return where, args
}

// ledgerSpans is a derived table of (user_id, token_id, team_id, class,
// entries, delta, token_delta, used) holding every entry of [since, until)
// once.
func ledgerSpans(since, until time.Time) (string, []any) {
	const cols = "user_id, token_id, team_id, "
	from, to, whole, raw := daySpan(since, until)
	var parts []string
	var args []any
	add := func(q, where string, a []any) {
		parts = append(parts, q+" WHERE "+where)
		args = append(args, a...)
	}
	entry := "SELECT " + cols + ledgerClassSQL + " AS class, 1 AS entries, delta, token_delta, used FROM quota_ledger"
	if whole {
		where, a := rangeWhere("day", from, to)
		add("SELECT "+cols+"class, entries, delta, token_delta, used FROM ledger_rollups_daily", where, a)
		where, a = rangeWhere("created_at", from, to)
		add(entry, "rollup_pending = 1 AND "+where, a)
	}
	for _, w := range raw {
		where, a := rangeWhere("created_at", w.Since, w.Until)
		add(entry, where, a)
	}
	return "(" + joinUnion(parts) + ") spans", args
}

// rowSpans is ledgerSpans of the usage rows: (user_id, token_id, team_id,
// type, task, row_count, quota) as LogTotals counts them. The marked rows
// of the whole days are those above the backfill's range (below it, a
// mark means nothing: see rollupPendingMigration).
func rowSpans(since, until time.Time) (string, []any) {
	const row = "SELECT user_id, token_id, " + rowTeamSQL + " AS team_id, type, " + rowTaskSQL + " AS task, 1 AS row_count, " +
		rowQuotaSQL + " AS quota FROM usage_logs"
	from, to, whole, raw := daySpan(since, until)
	var parts []string
	var args []any
	if whole {
		where, a := rangeWhere("day", from, to)
		parts = append(parts, "SELECT user_id, token_id, team_id, type, task, row_count, quota FROM usage_books_daily WHERE "+where)
		args = append(args, a...)
		where, a = rangeWhere("created_at", from, to)
		parts = append(parts, row+" WHERE rollup_pending = 1 AND id >= (SELECT below_id FROM usage_rollup_backfill WHERE id = 1) AND "+where)
		args = append(args, a...)
	}
	for _, w := range raw {
		where, a := rangeWhere("created_at", w.Since, w.Until)
		parts = append(parts, row+" WHERE "+where)
		args = append(args, a...)
	}
	return "(" + joinUnion(parts) + ") spans", args
}

func joinUnion(parts []string) string {
	out := parts[0]
	for _, p := range parts[1:] {
		out += " UNION ALL " + p
	}
	return out
}

// LedgerTotals sums the window's entries per account and class; a zero
// Since is the ledger's beginning.
func (r booksRepo) LedgerTotals(ctx context.Context, w store.Window) ([]store.LedgerTotal, error) {
	from, a := ledgerSpans(w.Since, w.Until)
	q := "SELECT user_id, token_id, team_id, class, " + r.s.castInt("SUM(entries)") + ", " + r.s.castInt("SUM(delta)") + ", " +
		r.s.castInt("SUM(token_delta)") + ", " + r.s.castInt("SUM(used)") + " FROM " + from + " GROUP BY user_id, token_id, team_id, class"
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(q), a...)
	if err != nil {
		return nil, wrap(err, "sum ledger rollups")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.LedgerTotal, error) {
		var t store.LedgerTotal
		err := row.Scan(&t.UserID, &t.TokenID, &t.TeamID, &t.Class, &t.Entries, &t.Delta, &t.TokenDelta, &t.Used)
		return t, err
	})
	return out, wrap(err, "sum ledger rollups")
}

// LogTotals sums the window's rows from their books buckets once the
// backfill has folded every row into them, and from the rows before.
func (r booksRepo) LogTotals(ctx context.Context, w store.Window) ([]store.LogTotal, error) {
	var next, below int64
	err := r.s.db.QueryRowContext(ctx, "SELECT next_id, below_id FROM usage_rollup_backfill WHERE id = 1").Scan(&next, &below)
	if err != nil {
		return nil, wrap(err, "rollup watermark")
	}
	if next < below {
		return r.logTotalsRaw(ctx, w)
	}
	from, args := rowSpans(w.Since, w.Until)
	q := "SELECT user_id, token_id, type, task, " + r.s.castInt("SUM(row_count)") + ", " + r.s.castInt("SUM(quota)") + ", team_id FROM " +
		from + " GROUP BY user_id, token_id, type, task, team_id"
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(q), args...)
	if err != nil {
		return nil, wrap(err, "sum usage books")
	}
	out, err := collect(rows, scanLogTotal)
	return out, wrap(err, "sum usage books")
}

// Drifts reads every account's balance beside the sums of its buckets and
// its entries still marked for the catch-up, in one statement for the
// three kinds of account over one pass of the buckets (summed per user,
// key and team first: a few hundred lines to join). Read per account, the
// buckets of a user lay on as many pages as it has buckets.
func (r booksRepo) Drifts(ctx context.Context) (store.Drifts, error) {
	const sums = "WITH g AS (SELECT user_id, token_id, team_id, SUM(delta) AS d, SUM(token_delta) AS td FROM " +
		"(SELECT user_id, token_id, team_id, delta, token_delta FROM ledger_rollups_daily UNION ALL " +
		"SELECT user_id, token_id, team_id, delta, token_delta FROM quota_ledger WHERE rollup_pending = 1) e GROUP BY user_id, token_id, team_id) "
	part := func(kind, table, col, amount, where string) string {
		return "SELECT '" + kind + "', a.id, a.quota, " + r.s.castInt("a.quota - COALESCE(s.v, 0)") + " FROM " + table +
			" a LEFT JOIN (SELECT " + col + " AS id, SUM(" + amount + ") AS v FROM g WHERE " + where + " GROUP BY " + col + ") s ON s.id = a.id"
	}
	q := sums + part("user", "users", "user_id", "d", "team_id = 0") + " UNION ALL " + part("token", "tokens", "token_id", "td", "token_id <> 0") +
		" UNION ALL " + part("team", "teams", "team_id", "d", "team_id <> 0")
	d := store.Drifts{Users: map[int64]int64{}, Tokens: map[int64]int64{}, Teams: map[int64]int64{}, Limited: map[int64]bool{}}
	rows, err := r.s.db.QueryContext(ctx, q)
	if err != nil {
		return d, wrap(err, "drifts")
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var id, quota, drift int64
		if err := rows.Scan(&kind, &id, &quota, &drift); err != nil {
			return d, wrap(err, "drifts")
		}
		switch kind {
		case "user":
			d.Users[id] = drift
		case "team":
			d.Teams[id] = drift
		default:
			d.Tokens[id] = drift
			d.Limited[id] = quota >= 0
		}
	}
	return d, wrap(rows.Err(), "drifts")
}
