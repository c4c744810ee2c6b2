package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// This file inserts ledger rows and finds out which of them were new, the
// part of Apply that differs between the dialects.

// errLedgerRace means MySQL (in a chunk) or SQLite (in a batch) skipped some
// but not all rows, so which of its entries are new is unknown. classify
// makes it retryable, and the rerun asks which keys are new.
var errLedgerRace = errors.New("ledger keys were recorded concurrently")

// ledgerInsertSQL inserts rows ledger rows, skipping keys already recorded.
// SQLite and PostgreSQL return the keys they inserted. MySQL has neither ON
// CONFLICT nor RETURNING; INSERT IGNORE reports only how many rows it
// inserted, regardless of the found-rows client flag.
func (s *Store) ledgerInsertSQL(rows int) string {
	row := "(?" + strings.Repeat(", ?", ledgerCols-1) + ", NULL)"
	values := "VALUES " + row + strings.Repeat(", "+row, rows-1)
	if s.dialect == MySQL {
		return "INSERT IGNORE INTO quota_ledger (" + ledgerWriteColumns + ") " + values
	}
	return "INSERT INTO quota_ledger (" + ledgerWriteColumns + ") " + values + " ON CONFLICT (idem_key) DO NOTHING RETURNING idem_key"
}

// ledgerWriteColumns are the columns the billing writer writes: it adds
// its entries to the books rollups in the same transaction, so it clears
// the mark a node without them leaves (booksRollupsMigration).
const ledgerWriteColumns = ledgerColumns + ", rollup_pending"

// appendLedgerArgs appends the bind arguments of entries in ledgerColumns
// order.
func appendLedgerArgs(args []any, entries []store.LedgerEntry, stamp time.Time) []any {
	for _, e := range entries {
		created := stamp
		if !e.CreatedAt.IsZero() {
			created = dbTime(e.CreatedAt)
		}
		args = append(args, e.Key, e.Kind, e.UserID, e.TokenID, e.Delta, e.TokenDelta, e.Used, created, e.TeamID)
	}
	return args
}

// insertLedgerReturning is the SQLite and PostgreSQL insert: the whole batch
// in one statement on SQLite, chunk by chunk on PostgreSQL. It
// marks the entries whose keys the database reports as inserted. A
// concurrent transaction inserting the same key makes the database wait for
// it, so the report is exact.
func insertLedgerReturning(ctx context.Context, tx *sql.Tx, b *batchStmts, entries []store.LedgerEntry,
	stamp time.Time, careful bool) ([]bool, error) {
	fresh := make([]bool, len(entries))
	if b.ledgerBatch != nil {
		return fresh, withBatch(ledgerRows{entries, stamp}, func(h int64) error {
			if !careful {
				return insertLedgerCounted(ctx, tx, b, h, fresh)
			}
			rows, err := tx.StmtContext(ctx, b.ledgerReturning).QueryContext(ctx, h)
			if err != nil {
				return err
			}
			return markKeys(rows, keyPositions(entries), fresh)
		})
	}
	pos := keyPositions(entries)
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

// insertLedgerCounted is SQLite's first try at a batch: nearly every batch
// records only new keys, and then the count of inserted rows says which
// are new without SQLite returning each key and Go reading it back. A
// count between none and all means the batch replays some keys; as on
// MySQL the transaction is then rerun with careful set, which asks for the
// inserted keys. The transaction holds SQLite's only write lock, so no key
// is recorded by anyone else between the two.
func insertLedgerCounted(ctx context.Context, tx *sql.Tx, b *batchStmts, h int64, fresh []bool) error {
	res, err := tx.StmtContext(ctx, b.ledgerBatch).ExecContext(ctx, h)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return err
	case n == int64(len(fresh)):
		for i := range fresh {
			fresh[i] = true
		}
	case n != 0:
		return errLedgerRace
	}
	return nil
}

// keyPositions maps each entry's key to its index; the keys of a batch's
// entries are distinct. Only the paths that read keys back need it, so
// SQLite's first try at a batch builds no map.
func keyPositions(entries []store.LedgerEntry) map[string]int {
	pos := make(map[string]int, len(entries))
	for i, e := range entries {
		pos[e.Key] = i
	}
	return pos
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
func insertLedgerIgnore(ctx context.Context, tx *sql.Tx, b *batchStmts, entries []store.LedgerEntry,
	stamp time.Time, careful bool) ([]bool, error) {
	pending := entries
	var index []int // pending[i] is entries[index[i]]; nil when pending is entries
	if careful {
		known, err := knownKeys(ctx, tx, b, entries, keyPositions(entries))
		if err != nil {
			return nil, err
		}
		pending = nil
		for i, e := range entries {
			if !known[i] {
				pending, index = append(pending, e), append(index, i)
			}
		}
	}
	fresh := make([]bool, len(entries))
	args := make([]any, 0, chunkSizes[0]*ledgerCols)
	err := chunks(len(pending), func(lo, hi, k int) error {
		args = appendLedgerArgs(args[:0], pending[lo:hi], stamp)
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
