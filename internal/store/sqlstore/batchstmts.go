package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// chunkSizes are the row counts of the multi-row statements the billing
// writer uses. Every batch is cut greedily into these sizes, so each table
// has only four INSERT texts, each parsed once per connection instead of
// once per batch. Sixty-four rows of twelve columns stay far below every
// dialect's parameter limit.
var chunkSizes = [...]int{64, 16, 4, 1}

const nChunkSizes = len(chunkSizes)

// chunks calls fn for consecutive ranges [lo, hi) covering n items, largest
// sizes first; k is the index of the range's size in chunkSizes.
func chunks(n int, fn func(lo, hi, k int) error) error {
	lo := 0
	for k, size := range chunkSizes {
		for n-lo >= size {
			if err := fn(lo, lo+size, k); err != nil {
				return err
			}
			lo += size
		}
	}
	return nil
}

// rowsSQL is the VALUES list of rows rows of cols placeholders each.
func rowsSQL(cols, rows int) string {
	row := "(?" + strings.Repeat(", ?", cols-1) + ")"
	return row + strings.Repeat(", "+row, rows-1)
}

// batchStmts are the billing writer's statements, prepared once per store.
// Transactions use them through tx.StmtContext, which database/sql prepares
// on a connection only the first time that connection needs it.
type batchStmts struct {
	logInsert    [nChunkSizes]*sql.Stmt
	ledgerInsert [nChunkSizes]*sql.Stmt
	// ledgerKnown selects which of a chunk's keys are recorded; MySQL only,
	// where INSERT IGNORE cannot say which rows it skipped.
	ledgerKnown [nChunkSizes]*sql.Stmt
	userMove    *sql.Stmt
	tokenMove   *sql.Stmt
	teamMove    *sql.Stmt
	// The batch statements read a whole batch from the batch table; SQLite
	// only, which has them instead of all the others (see sqlitebatch.go).
	logBatch, ledgerBatch, userMoveBatch, tokenMoveBatch, teamMoveBatch *sql.Stmt
	// ledgerReturning is ledgerBatch reporting the keys it inserted.
	ledgerReturning *sql.Stmt
	// The bucket upserts (upserts.go): upsert by chunk size, or on SQLite
	// upsertBatch reading the batch table.
	upsert      [nBucketTables][nChunkSizes]*sql.Stmt
	upsertBatch [nBucketTables]*sql.Stmt
}

// batch returns the prepared billing statements, preparing them on first
// use. It must be called before the caller's transaction begins: preparing
// takes a connection from the pool, and an in-memory SQLite pool has only
// the one the transaction would hold. A failed preparation is not kept, so
// the next batch tries again.
func (s *Store) batch(ctx context.Context) (*batchStmts, error) {
	if b := s.stmts.Load(); b != nil {
		return b, nil
	}
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if b := s.stmts.Load(); b != nil {
		return b, nil
	}
	b := &batchStmts{}
	if err := s.prepareBatch(ctx, b); err != nil {
		return nil, errors.Join(err, b.close())
	}
	s.stmts.Store(b)
	return b, nil
}

func (s *Store) prepareBatch(ctx context.Context, b *batchStmts) error {
	prep := func(dst **sql.Stmt, query string) error {
		st, err := s.db.PrepareContext(ctx, s.Rebind(query))
		*dst = st
		return err
	}
	if err := s.prepareUpserts(prep, b); err != nil {
		return err
	}
	if s.dialect == SQLite {
		return prepareSQLiteBatch(prep, b)
	}
	for k, n := range chunkSizes {
		if err := prep(&b.logInsert[k], "INSERT INTO usage_logs ("+logWriteColumns+") VALUES "+logRowsSQL(n)); err != nil {
			return err
		}
		if err := prep(&b.ledgerInsert[k], s.ledgerInsertSQL(n)); err != nil {
			return err
		}
		if s.dialect != MySQL {
			continue
		}
		known := "SELECT idem_key FROM quota_ledger WHERE idem_key IN (?" + strings.Repeat(", ?", n-1) + ")"
		if err := prep(&b.ledgerKnown[k], known); err != nil {
			return err
		}
	}
	if err := prep(&b.userMove, "UPDATE users SET quota = "+userQuotaSQL("?")+", used_quota = used_quota + ? WHERE id = ?"); err != nil {
		return err
	}
	if err := prep(&b.teamMove, "UPDATE teams SET quota = "+userQuotaSQL("?")+", used_quota = used_quota + ? WHERE id = ?"); err != nil {
		return err
	}
	return prep(&b.tokenMove, "UPDATE tokens SET quota = "+tokenQuotaSQL("?")+", used_quota = used_quota + ? WHERE id = ?")
}

func prepareSQLiteBatch(prep func(**sql.Stmt, string) error, b *batchStmts) error {
	if err := prep(&b.logBatch, fmt.Sprintf(sqliteLogBatch, batchColumns(logInsertCols))); err != nil {
		return err
	}
	if err := prep(&b.ledgerBatch, fmt.Sprintf(sqliteLedgerBatch, batchColumns(ledgerCols))); err != nil {
		return err
	}
	if err := prep(&b.ledgerReturning, fmt.Sprintf(sqliteLedgerReturning, batchColumns(ledgerCols))); err != nil {
		return err
	}
	if err := prep(&b.userMoveBatch, fmt.Sprintf(sqliteMoveBatch, "users", userQuotaSQL("m.c1"), "users")); err != nil {
		return err
	}
	if err := prep(&b.teamMoveBatch, fmt.Sprintf(sqliteMoveBatch, "teams", userQuotaSQL("m.c1"), "teams")); err != nil {
		return err
	}
	return prep(&b.tokenMoveBatch, fmt.Sprintf(sqliteMoveBatch, "tokens", tokenQuotaSQL("m.c1"), "tokens"))
}

// userQuotaSQL is a user's quota moved by delta.
func userQuotaSQL(delta string) string { return "quota + " + delta }

// tokenQuotaSQL is a key's quota moved by delta; -1 marks an unlimited key
// and must survive any delta.
func tokenQuotaSQL(delta string) string {
	return "CASE WHEN quota = -1 THEN -1 ELSE quota + " + delta + " END"
}

// close closes every prepared statement; nil ones were never prepared.
func (b *batchStmts) close() error {
	var errs []error
	all := append(append(append([]*sql.Stmt{b.userMove, b.tokenMove, b.teamMove, b.logBatch, b.ledgerBatch, b.ledgerReturning, b.userMoveBatch, b.tokenMoveBatch, b.teamMoveBatch}, b.logInsert[:]...), b.ledgerInsert[:]...), b.ledgerKnown[:]...)
	all = append(all, b.upsertBatch[:]...)
	for t := range b.upsert {
		all = append(all, b.upsert[t][:]...)
	}
	for _, st := range all {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
