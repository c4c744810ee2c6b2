package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"modernc.org/sqlite/vtab"
)

// bucketTable names one of the tables the billing writer adds buckets to
// in its transaction.
type bucketTable int

const (
	hourlyRollups bucketTable = iota
	dailyRollups
	ledgerBooks
	rowBooks
	hourlyChannels
	dailyChannels
	reportRollups
	nBucketTables
)

// bucketUpsert is how buckets are added to one table: the columns a row
// gives (its key's, then its sums'), the key a row is merged on, and the
// sums added when it is.
type bucketUpsert struct {
	table, cols, keys, sums string
	// n is the number of columns in cols.
	n int
}

var bucketUpserts = [nBucketTables]bucketUpsert{
	hourlyRollups: {"usage_rollups", "day, " + rollupKeyCols + ", " + rollupSumCols, rollupKeyCols, rollupSumCols, rollupCols},
	dailyRollups:  {"usage_rollups_daily", dailyKeyCols + ", " + rollupSumCols, dailyKeyCols, rollupSumCols, rollupCols - 1},
	ledgerBooks: {"ledger_rollups_daily", "day, user_id, token_id, team_id, class, entries, delta, token_delta, used",
		"day, user_id, token_id, team_id, class", "entries, delta, token_delta, used", 9},
	rowBooks: {"usage_books_daily", "day, user_id, token_id, team_id, type, task, row_count, quota",
		"day, user_id, token_id, team_id, type, task", "row_count, quota", 8},
	hourlyChannels: {"usage_channel_rollups", "hour, day, " + channelKeyCols + ", " + channelSumCols, "hour, " + channelKeyCols, channelSumCols, 14},
	dailyChannels:  {"usage_channel_rollups_daily", "day, " + channelKeyCols + ", " + channelSumCols, "day, " + channelKeyCols, channelSumCols, 13},
	reportRollups:  {"usage_report_daily", reportKeyCols + ", " + rollupSumCols, reportKeyCols, rollupSumCols, 11},
}

// bucketUpsertSQL adds rows rows of u given as bound arguments.
func (s *Store) bucketUpsertSQL(u bucketUpsert, rows int) string {
	return s.addingOnConflict("INSERT INTO "+u.table+" ("+u.cols+") VALUES "+rowsSQL(u.n, rows), u.table, u.keys, u.sums)
}

// upsertBatchSQL adds the rows of a batch table handle (SQLite). The
// WHERE clause also keeps SQLite from reading ON CONFLICT as a join's ON.
func (s *Store) upsertBatchSQL(u bucketUpsert) string {
	q := "INSERT INTO " + u.table + " (" + u.cols + ") SELECT " + batchColumns(u.n) + " FROM " + batchTableName +
		" WHERE batch = ? ORDER BY rowid"
	return s.addingOnConflict(q, u.table, u.keys, u.sums)
}

// prepareUpserts prepares the bucket upserts: on SQLite one statement a
// table reading the batch table, elsewhere one a table and chunk size.
// Built and parsed anew every flush they were 8 % of the writer's CPU.
func (s *Store) prepareUpserts(prep func(**sql.Stmt, string) error, b *batchStmts) error {
	for t, u := range bucketUpserts {
		if s.dialect == SQLite {
			if err := prep(&b.upsertBatch[t], s.upsertBatchSQL(u)); err != nil {
				return err
			}
			continue
		}
		for k, n := range chunkSizes {
			if err := prep(&b.upsert[t][k], s.bucketUpsertSQL(u, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// upsert adds buckets to table t within tx. args holds the buckets' values
// one after another, each in the order of the table's cols, and the
// buckets in key order, so that two writers lock shared buckets in the same
// order and never deadlock each other; chunks keep that order.
func upsert(ctx context.Context, tx *sql.Tx, b *batchStmts, t bucketTable, args []any) error {
	cols := bucketUpserts[t].n
	if len(args)%cols != 0 {
		return fmt.Errorf("%s: %d values are not whole rows of %d", bucketUpserts[t].table, len(args), cols)
	}
	if len(args) == 0 {
		return nil
	}
	if st := b.upsertBatch[t]; st != nil {
		return execBatch(ctx, tx, st, flatRows{args: args, cols: cols})
	}
	return chunks(len(args)/cols, func(lo, hi, k int) error {
		_, err := tx.StmtContext(ctx, b.upsert[t][k]).ExecContext(ctx, args[lo*cols:hi*cols]...)
		return err
	})
}

// flatRows serves rows of cols values each, laid out one after another, to
// the batch table; times become the text the driver writes for a bound
// time, so a bucket added through either path has the same key.
type flatRows struct {
	args []any
	cols int
}

func (r flatRows) len() int { return len(r.args) / r.cols }

func (r flatRows) row(i int, dst []vtab.Value) []vtab.Value {
	dst = dst[:0]
	for _, v := range r.args[i*r.cols : (i+1)*r.cols] {
		if t, ok := v.(time.Time); ok {
			v = t.Format(sqliteTimeLayout)
		}
		dst = append(dst, v)
	}
	return dst
}

// bucketArgs is the bound arguments of rollup buckets, in the hourly or
// the daily table's column order.
func bucketArgs(buckets []rollupBucket, daily bool) []any {
	args := make([]any, 0, len(buckets)*rollupCols)
	for _, bk := range buckets {
		k, v := bk.k, bk.s
		args = append(args, dbTime(k.Hour.Truncate(24*time.Hour)))
		if !daily {
			args = append(args, dbTime(k.Hour))
		}
		args = append(args, k.UserID, k.TokenID, k.Model, k.ChannelID, k.TeamID, k.Type,
			v.Requests, v.InputTokens, v.OutputTokens, v.CacheReadTokens, v.Quota, v.UpstreamCostPico, v.Errors)
	}
	return args
}
