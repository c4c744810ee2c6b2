package sqlstore

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// ledgerBucketKey is one bucket of ledger_rollups_daily.
type ledgerBucketKey struct {
	day                     time.Time
	userID, tokenID, teamID int64
	class                   string
}

// rowBooksKey is one bucket of usage_books_daily.
type rowBooksKey struct {
	day                     time.Time
	userID, tokenID, teamID int64
	typ                     string
	task                    int64
}

// addLedgerRollups adds the entries a batch recorded to their daily
// buckets in the batch's transaction; entries with no time take the
// batch's stamp, as their rows do.
func (s *Store) addLedgerRollups(ctx context.Context, tx *sql.Tx, b *batchStmts, entries []store.LedgerEntry, stamp time.Time) error {
	sums := map[ledgerBucketKey]*[4]int64{}
	for _, e := range entries {
		at := stamp
		if !e.CreatedAt.IsZero() {
			at = dbTime(e.CreatedAt)
		}
		k := ledgerBucketKey{at.Truncate(24 * time.Hour), e.UserID, e.TokenID, e.TeamID, store.LedgerClassOf(e)}
		v := sums[k]
		if v == nil {
			v = new([4]int64)
			sums[k] = v
		}
		v[0]++
		v[1] += e.Delta
		v[2] += e.TokenDelta
		v[3] += e.Used
	}
	keys := slices.SortedFunc(maps.Keys(sums), func(a, b ledgerBucketKey) int {
		return compareKeys(a.day, b.day, []int64{a.userID, a.tokenID, a.teamID}, []int64{b.userID, b.tokenID, b.teamID}, a.class, b.class)
	})
	args := make([]any, 0, len(keys)*9)
	for _, k := range keys {
		v := sums[k]
		args = append(args, dbTime(k.day), k.userID, k.tokenID, k.teamID, k.class, v[0], v[1], v[2], v[3])
	}
	return upsert(ctx, tx, b, ledgerBooks, args)
}

// addRowBooks adds usage rows to their books buckets (store.RowBooksOf).
func (s *Store) addRowBooks(ctx context.Context, tx *sql.Tx, b *batchStmts, logs []store.UsageLog, stamp time.Time) error {
	sums := map[rowBooksKey]*[2]int64{}
	for _, l := range logs {
		at := stamp
		if !l.CreatedAt.IsZero() {
			at = dbTime(l.CreatedAt)
		}
		task, team, quota := store.RowBooksOf(l)
		k := rowBooksKey{day: at.Truncate(24 * time.Hour), userID: l.UserID, tokenID: l.TokenID, teamID: team, typ: l.Type}
		if task {
			k.task = 1
		}
		v := sums[k]
		if v == nil {
			v = new([2]int64)
			sums[k] = v
		}
		v[0]++
		v[1] += quota
	}
	keys := slices.SortedFunc(maps.Keys(sums), func(a, b rowBooksKey) int {
		return compareKeys(a.day, b.day, []int64{a.userID, a.tokenID, a.teamID, a.task}, []int64{b.userID, b.tokenID, b.teamID, b.task}, a.typ, b.typ)
	})
	args := make([]any, 0, len(keys)*8)
	for _, k := range keys {
		v := sums[k]
		args = append(args, dbTime(k.day), k.userID, k.tokenID, k.teamID, k.typ, k.task, v[0], v[1])
	}
	return upsert(ctx, tx, b, rowBooks, args)
}

// compareKeys orders buckets by day, ids and name, so two writers lock
// shared buckets in the same order and never deadlock each other.
func compareKeys(da, db time.Time, ia, ib []int64, na, nb string) int {
	if c := da.Compare(db); c != 0 {
		return c
	}
	for i := range ia {
		if ia[i] != ib[i] {
			if ia[i] < ib[i] {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(na, nb)
}

// catchUpLedger folds up to limit marked entries (written by a node of a
// release before the books rollups) into their buckets and clears their
// marks, within tx, which holds the backfill watermark's lock: two nodes
// never fold an entry twice.
func (s *Store) catchUpLedger(ctx context.Context, tx *sql.Tx, b *batchStmts, limit int) (more bool, err error) {
	q := "SELECT id, " + ledgerColumns + " FROM quota_ledger WHERE rollup_pending = 1 ORDER BY id LIMIT ?"
	if s.dialect != SQLite {
		q += " FOR UPDATE"
	}
	rows, err := tx.QueryContext(ctx, s.Rebind(q), limit)
	if err != nil {
		return false, err
	}
	entries, err := collect(rows, scanEntry)
	if err != nil || len(entries) == 0 {
		return false, err
	}
	if err := s.addLedgerRollups(ctx, tx, b, entries, now()); err != nil {
		return false, err
	}
	ids := make([]any, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	_, err = tx.ExecContext(ctx, s.Rebind("UPDATE quota_ledger SET rollup_pending = NULL WHERE id IN (?"+
		strings.Repeat(", ?", len(ids)-1)+")"), ids...)
	return len(entries) == limit, err
}
