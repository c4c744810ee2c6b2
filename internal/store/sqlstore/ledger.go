package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type ledgerRepo struct{ s *Store }

const ledgerColumns = "idem_key, kind, user_id, token_id, delta, token_delta, used, created_at"

// maxKeyLen is the width of the idem_key column; checked up front because
// MySQL's INSERT IGNORE would otherwise truncate a longer key silently.
const maxKeyLen = 255

// insertIgnoreSQL inserts a ledger row or, when its key exists, nothing;
// rows affected tells which happened. MySQL has no ON CONFLICT, and INSERT
// IGNORE is its only form that reports 0 rows for a duplicate regardless of
// the found-rows client flag.
func (s *Store) insertIgnoreSQL() string {
	values := "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	if s.dialect == MySQL {
		return "INSERT IGNORE INTO quota_ledger (" + ledgerColumns + ") " + values
	}
	return s.Rebind("INSERT INTO quota_ledger (" + ledgerColumns + ") " + values + " ON CONFLICT (idem_key) DO NOTHING")
}

// balance accumulates one account's changes within a batch.
type balance struct{ delta, used int64 }

// Apply records entries and moves the balances of the entries it inserted,
// all in one transaction. Entries whose key is already recorded (earlier or
// in the same batch) change nothing. Balance updates are summed per user
// and per token and applied in id order, users before tokens, so concurrent
// batches always lock rows in the same order and cannot deadlock on them.
// An entry for a user or token that no longer exists is still recorded; the
// missing balance is simply not there to change.
func (r ledgerRepo) Apply(ctx context.Context, entries []store.LedgerEntry) error {
	if len(entries) == 0 {
		return nil
	}
	stamp := now()
	for _, e := range entries {
		if e.Key == "" || len(e.Key) > maxKeyLen {
			return fmt.Errorf("apply ledger: key must be 1 to %d bytes", maxKeyLen)
		}
	}
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		users, tokens, err := r.insertEntries(ctx, tx, entries, stamp)
		if err != nil {
			return err
		}
		return r.moveBalances(ctx, tx, users, tokens)
	})
	return wrap(err, "apply ledger")
}

func (r ledgerRepo) insertEntries(ctx context.Context, tx *sql.Tx, entries []store.LedgerEntry, stamp time.Time) (users, tokens map[int64]*balance, err error) {
	stmt, err := tx.PrepareContext(ctx, r.s.insertIgnoreSQL())
	if err != nil {
		return nil, nil, err
	}
	defer stmt.Close()
	users, tokens = map[int64]*balance{}, map[int64]*balance{}
	for _, e := range entries {
		created := stamp
		if !e.CreatedAt.IsZero() {
			created = dbTime(e.CreatedAt)
		}
		res, err := stmt.ExecContext(ctx, e.Key, e.Kind, e.UserID, e.TokenID, e.Delta, e.TokenDelta, e.Used, created)
		if err != nil {
			return nil, nil, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, nil, err
		}
		if n == 0 {
			continue
		}
		add(users, e.UserID, e.Delta, e.Used)
		if e.TokenID != 0 {
			add(tokens, e.TokenID, e.TokenDelta, e.Used)
		}
	}
	return users, tokens, nil
}

func add(m map[int64]*balance, id, delta, used int64) {
	b := m[id]
	if b == nil {
		b = &balance{}
		m[id] = b
	}
	b.delta += delta
	b.used += used
}

func (r ledgerRepo) moveBalances(ctx context.Context, tx *sql.Tx, users, tokens map[int64]*balance) error {
	steps := []struct {
		accounts map[int64]*balance
		query    string
	}{
		{users, "UPDATE users SET quota = quota + ?, used_quota = used_quota + ? WHERE id = ?"},
		// -1 marks an unlimited key and must survive any delta.
		{tokens, "UPDATE tokens SET quota = CASE WHEN quota = -1 THEN -1 ELSE quota + ? END, used_quota = used_quota + ? WHERE id = ?"},
	}
	for _, step := range steps {
		stmt, err := tx.PrepareContext(ctx, r.s.Rebind(step.query))
		if err != nil {
			return err
		}
		ids := make([]int64, 0, len(step.accounts))
		for id := range step.accounts {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			b := step.accounts[id]
			if _, err := stmt.ExecContext(ctx, b.delta, b.used, id); err != nil {
				stmt.Close()
				return err
			}
		}
		stmt.Close()
	}
	return nil
}

// Sum totals a user's recorded Delta and Used.
func (r ledgerRepo) Sum(ctx context.Context, userID int64) (delta, used int64, err error) {
	cast := func(expr string) string {
		switch r.s.dialect {
		case Postgres:
			return "CAST(" + expr + " AS BIGINT)"
		case MySQL:
			return "CAST(" + expr + " AS SIGNED)"
		}
		return expr
	}
	q := "SELECT " + cast("COALESCE(SUM(delta), 0)") + ", " + cast("COALESCE(SUM(used), 0)") + " FROM quota_ledger WHERE user_id = ?"
	err = r.s.db.QueryRowContext(ctx, r.s.Rebind(q), userID).Scan(&delta, &used)
	if err != nil {
		return 0, 0, wrap(err, "sum ledger")
	}
	return delta, used, nil
}

// List returns a user's entries newest first; userID 0 lists everyone's.
func (r ledgerRepo) List(ctx context.Context, userID int64, p store.Page) ([]store.LedgerEntry, int, error) {
	where, args := "", []any{}
	if userID != 0 {
		where, args = " WHERE user_id = ?", append(args, userID)
	}
	total, err := r.s.count(ctx, "SELECT COUNT(*) FROM quota_ledger"+where, args...)
	if err != nil {
		return nil, 0, wrap(err, "count ledger")
	}
	limit, offset := limitOffset(p)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT id, "+ledgerColumns+" FROM quota_ledger"+where+" ORDER BY id DESC LIMIT ? OFFSET ?"),
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, wrap(err, "list ledger")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.LedgerEntry, error) {
		var e store.LedgerEntry
		err := row.Scan(&e.ID, &e.Key, &e.Kind, &e.UserID, &e.TokenID, &e.Delta, &e.TokenDelta, &e.Used, &e.CreatedAt)
		e.CreatedAt = e.CreatedAt.UTC()
		return e, err
	})
	if err != nil {
		return nil, 0, wrap(err, "list ledger")
	}
	return out, total, nil
}
