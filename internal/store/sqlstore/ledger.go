package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type ledgerRepo struct{ s *Store }

const ledgerColumns = "idem_key, kind, user_id, token_id, delta, token_delta, used, created_at"

// ledgerCols is the number of columns in ledgerColumns.
const ledgerCols = 8

// maxKeyLen is the width of the idem_key column; checked up front because
// MySQL's INSERT IGNORE would otherwise truncate a longer key silently.
const maxKeyLen = 255

// errLedgerRace means MySQL skipped some but not all rows of a chunk, so
// which of its entries are new is unknown. classify makes it retryable, and
// the rerun looks the keys up before inserting.
var errLedgerRace = errors.New("ledger keys were recorded concurrently")

// ledgerInsertSQL inserts rows ledger rows, skipping keys already recorded.
// SQLite and PostgreSQL return the keys they inserted. MySQL has neither ON
// CONFLICT nor RETURNING; INSERT IGNORE reports only how many rows it
// inserted, regardless of the found-rows client flag.
func (s *Store) ledgerInsertSQL(rows int) string {
	values := "VALUES " + rowsSQL(ledgerCols, rows)
	if s.dialect == MySQL {
		return "INSERT IGNORE INTO quota_ledger (" + ledgerColumns + ") " + values
	}
	return "INSERT INTO quota_ledger (" + ledgerColumns + ") " + values + " ON CONFLICT (idem_key) DO NOTHING RETURNING idem_key"
}

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

// uniqueKeys drops every entry whose key appeared earlier in the batch, as
// applying them one by one would, and indexes the rest by key.
func uniqueKeys(entries []store.LedgerEntry) ([]store.LedgerEntry, map[string]int) {
	pos := make(map[string]int, len(entries))
	var out []store.LedgerEntry // stays nil while no key repeats
	for i, e := range entries {
		if _, dup := pos[e.Key]; dup {
			if out == nil {
				out = slices.Clone(entries[:i])
			}
			continue
		}
		pos[e.Key] = len(pos)
		if out != nil {
			out = append(out, e)
		}
	}
	if out == nil {
		return entries, pos
	}
	return out, pos
}

// applyLedger inserts entries (unique keys, indexed by pos) and moves the
// balances of those that were new.
func (s *Store) applyLedger(ctx context.Context, tx *sql.Tx, b *batchStmts, entries []store.LedgerEntry, pos map[string]int,
	stamp time.Time, careful bool) error {
	var fresh []bool
	var err error
	if s.dialect == MySQL {
		fresh, err = insertLedgerIgnore(ctx, tx, b, entries, pos, stamp, careful)
	} else {
		fresh, err = insertLedgerReturning(ctx, tx, b, entries, pos, stamp)
	}
	if err != nil {
		return err
	}
	users, tokens := sumBalances(entries, fresh)
	return moveBalances(ctx, tx, b, users, tokens)
}

func appendLedgerArgs(args []any, entries []store.LedgerEntry, stamp time.Time) []any {
	for _, e := range entries {
		created := stamp
		if !e.CreatedAt.IsZero() {
			created = dbTime(e.CreatedAt)
		}
		args = append(args, e.Key, e.Kind, e.UserID, e.TokenID, e.Delta, e.TokenDelta, e.Used, created)
	}
	return args
}

// insertLedgerReturning inserts chunk by chunk and marks the entries whose
// keys the database reports as inserted. A concurrent transaction inserting
// the same key makes the database wait for it, so the report is exact.
func insertLedgerReturning(ctx context.Context, tx *sql.Tx, b *batchStmts, entries []store.LedgerEntry, pos map[string]int,
	stamp time.Time) ([]bool, error) {
	fresh := make([]bool, len(entries))
	if b.ledgerJSON != nil && ledgerJSONSafe(entries) {
		rows, err := tx.StmtContext(ctx, b.ledgerJSON).QueryContext(ctx, ledgerJSON(entries, stamp))
		if err != nil {
			return nil, err
		}
		return fresh, markKeys(rows, pos, fresh)
	}
	args := make([]any, 0, chunkSizes[0]*ledgerCols)
	err := chunks(len(entries), func(lo, hi, k int) error {
		args = appendLedgerArgs(args[:0], entries[lo:hi], stamp)
		rows, err := tx.StmtContext(ctx, b.ledgerInsert[k]).QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		return markKeys(rows, pos, fresh)
	})
	return fresh, err
}

// markKeys sets mark[pos[key]] for every key in rows and closes rows.
func markKeys(rows *sql.Rows, pos map[string]int, mark []bool) error {
	defer rows.Close()
	var key sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&key); err != nil {
			return err
		}
		if i, ok := pos[string(key)]; ok {
			mark[i] = true
		}
	}
	return rows.Err()
}

// insertLedgerIgnore is the MySQL insert. A chunk whose rows were all
// inserted, or none, needs no further question. A chunk with some skipped
// means a key of this batch was recorded before (a replay) or by a
// concurrent transaction; the transaction is then rerun with careful set,
// which first looks up which keys are recorded and inserts only the others.
// If even then a row is skipped, another transaction recorded that key in
// between, and the rerun is repeated.
func insertLedgerIgnore(ctx context.Context, tx *sql.Tx, b *batchStmts, entries []store.LedgerEntry, pos map[string]int,
	stamp time.Time, careful bool) ([]bool, error) {
	todo := entries
	var index []int // todo[i] is entries[index[i]]; nil when todo is entries
	if careful {
		known, err := knownKeys(ctx, tx, b, entries, pos)
		if err != nil {
			return nil, err
		}
		todo = nil
		for i, e := range entries {
			if !known[i] {
				todo, index = append(todo, e), append(index, i)
			}
		}
	}
	fresh := make([]bool, len(entries))
	args := make([]any, 0, chunkSizes[0]*ledgerCols)
	err := chunks(len(todo), func(lo, hi, k int) error {
		args = appendLedgerArgs(args[:0], todo[lo:hi], stamp)
		res, err := tx.StmtContext(ctx, b.ledgerInsert[k]).ExecContext(ctx, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		switch {
		case err != nil:
			return err
		case n == int64(hi-lo):
			for i := lo; i < hi; i++ {
				if index != nil {
					fresh[index[i]] = true
				} else {
					fresh[i] = true
				}
			}
		case n == 0 && !careful:
		default:
			return errLedgerRace
		}
		return nil
	})
	return fresh, err
}

// knownKeys reports which entries' keys are already recorded.
func knownKeys(ctx context.Context, tx *sql.Tx, b *batchStmts, entries []store.LedgerEntry, pos map[string]int) ([]bool, error) {
	known := make([]bool, len(entries))
	args := make([]any, 0, chunkSizes[0])
	err := chunks(len(entries), func(lo, hi, k int) error {
		args = args[:0]
		for _, e := range entries[lo:hi] {
			args = append(args, e.Key)
		}
		rows, err := tx.StmtContext(ctx, b.ledgerKnown[k]).QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		return markKeys(rows, pos, known)
	})
	return known, err
}

// balance accumulates one account's changes within a batch.
type balance struct{ delta, used int64 }

// sumBalances totals the changes of the fresh entries per user and per
// token.
func sumBalances(entries []store.LedgerEntry, fresh []bool) (users, tokens map[int64]*balance) {
	users, tokens = map[int64]*balance{}, map[int64]*balance{}
	for i, e := range entries {
		if !fresh[i] {
			continue
		}
		add(users, e.UserID, e.Delta, e.Used)
		if e.TokenID != 0 {
			add(tokens, e.TokenID, e.TokenDelta, e.Used)
		}
	}
	return users, tokens
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

// moveBalances applies the summed changes in id order, users before tokens,
// so concurrent batches always lock rows in the same order and cannot
// deadlock on them. An entry for a user or token that no longer exists is
// still recorded; the missing balance is simply not there to change.
func moveBalances(ctx context.Context, tx *sql.Tx, b *batchStmts, users, tokens map[int64]*balance) error {
	for _, step := range []struct {
		accounts map[int64]*balance
		stmt     *sql.Stmt
		json     *sql.Stmt
	}{{users, b.userMove, b.userMoveJSON}, {tokens, b.tokenMove, b.tokenMoveJSON}} {
		if len(step.accounts) == 0 {
			continue
		}
		ids := slices.Sorted(maps.Keys(step.accounts))
		if step.json != nil {
			if _, err := tx.StmtContext(ctx, step.json).ExecContext(ctx, balancesJSON(ids, step.accounts)); err != nil {
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
