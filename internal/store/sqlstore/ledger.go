package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type ledgerRepo struct{ s *Store }

const ledgerColumns = "idem_key, kind, user_id, token_id, delta, token_delta, used, created_at, team_id"

// ledgerCols is the number of columns in ledgerColumns.
const ledgerCols = 9

// maxKeyLen is the width of the idem_key column; checked up front because
// MySQL's INSERT IGNORE would otherwise truncate a longer key silently.
const maxKeyLen = 255

// Apply records entries and moves the balances of the entries it inserted,
// all in one transaction. Entries whose key is already recorded (earlier or
// in the same batch) change nothing.
func (r ledgerRepo) Apply(ctx context.Context, entries []store.LedgerEntry) error {
	return wrap(r.s.write(ctx, entries, nil), "apply ledger")
}

// checkKeys rejects a batch with a key the idem_key column cannot hold.
func checkKeys(entries []store.LedgerEntry) error {
	for _, e := range entries {
		if e.Key == "" || len(e.Key) > maxKeyLen {
			return fmt.Errorf("key must be 1 to %d bytes", maxKeyLen)
		}
	}
	return nil
}

// balance accumulates one account's changes within a batch.
type balance struct{ delta, used int64 }

// accounts are a batch's balance changes per user, key and team.
type accounts struct{ users, tokens, teams map[int64]*balance }

// sumBalances totals the changes of the fresh entries per user, per token
// and per team; a nil fresh means all of them. An entry with a team moves
// the team's shared balance in place of its user's.
func sumBalances(entries []store.LedgerEntry, fresh []bool) accounts {
	a := accounts{users: map[int64]*balance{}, tokens: map[int64]*balance{}, teams: map[int64]*balance{}}
	for i, e := range entries {
		if fresh != nil && !fresh[i] {
			continue
		}
		if e.TeamID != 0 {
			add(a.teams, e.TeamID, e.Delta, e.Used)
		} else {
			add(a.users, e.UserID, e.Delta, e.Used)
		}
		if e.TokenID != 0 {
			add(a.tokens, e.TokenID, e.TokenDelta, e.Used)
		}
	}
	return a
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

// moveBalances applies the summed changes in id order, users before
// tokens before teams, so concurrent batches always lock rows in the same
// order and cannot deadlock on them. An entry for an account that no
// longer exists is still recorded; the missing balance is simply not there
// to change.
func moveBalances(ctx context.Context, tx *sql.Tx, b *batchStmts, a accounts) error {
	for _, step := range []struct {
		accounts map[int64]*balance
		stmt     *sql.Stmt
		batch    *sql.Stmt
	}{{a.users, b.userMove, b.userMoveBatch}, {a.tokens, b.tokenMove, b.tokenMoveBatch}, {a.teams, b.teamMove, b.teamMoveBatch}} {
		if len(step.accounts) == 0 {
			continue
		}
		ids := slices.Sorted(maps.Keys(step.accounts))
		if step.batch != nil {
			if err := execBatch(ctx, tx, step.batch, moveRows{ids, step.accounts}); err != nil {
				return err
			}
			continue
		}
		stmt := tx.StmtContext(ctx, step.stmt)
		for _, id := range ids {
			a := step.accounts[id]
			if _, err := stmt.ExecContext(ctx, a.delta, a.used, id); err != nil {
				return err
			}
		}
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
	q := "SELECT " + cast("COALESCE(SUM(delta), 0)") + ", " + cast("COALESCE(SUM(used), 0)") + " FROM quota_ledger WHERE user_id = ? AND team_id = 0"
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
		err := row.Scan(&e.ID, &e.Key, &e.Kind, &e.UserID, &e.TokenID, &e.Delta, &e.TokenDelta, &e.Used, &e.CreatedAt, &e.TeamID)
		e.CreatedAt = e.CreatedAt.UTC()
		return e, err
	})
	if err != nil {
		return nil, 0, wrap(err, "list ledger")
	}
	return out, total, nil
}
