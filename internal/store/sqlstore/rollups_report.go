package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// reportKeyCols is the key of a report rollup (reportRollupsMigration).
const reportKeyCols = "dim, day, dim_value, type"

// reportDims are the dimensions the report rollups keep, each with its
// value in a daily bucket's key as the text a report groups by.
var reportDims = []struct {
	dim   string
	value func(k store.RollupKey) string
}{
	{store.DimChannel, func(k store.RollupKey) string { return strconv.FormatInt(k.ChannelID, 10) }},
	{store.DimToken, func(k store.RollupKey) string { return strconv.FormatInt(k.TokenID, 10) }},
	{store.DimModel, func(k store.RollupKey) string { return k.Model }},
	{store.DimTeam, func(k store.RollupKey) string { return strconv.FormatInt(k.TeamID, 10) }},
	{store.DimUser, func(k store.RollupKey) string { return strconv.FormatInt(k.UserID, 10) }},
}

type reportKey struct {
	dim   string
	day   time.Time
	value string
	typ   string
}

type reportBucket struct {
	k reportKey
	s store.RollupSums
}

// reportBuckets are daily buckets summed per dimension, in key order, so
// that two writers lock shared buckets in the same order.
func reportBuckets(daily []rollupBucket) []reportBucket {
	at := map[reportKey]int{}
	var out []reportBucket
	for _, d := range reportDims {
		for _, bk := range daily {
			k := reportKey{d.dim, bk.k.Hour, d.value(bk.k), bk.k.Type}
			j, ok := at[k]
			if !ok {
				j = len(out)
				at[k] = j
				out = append(out, reportBucket{k: k})
			}
			out[j].s.Add(bk.s)
		}
	}
	slices.SortFunc(out, func(a, b reportBucket) int {
		return cmp.Or(strings.Compare(a.k.dim, b.k.dim), a.k.day.Compare(b.k.day), strings.Compare(a.k.value, b.k.value),
			strings.Compare(a.k.typ, b.k.typ))
	})
	return out
}

// reportArgs is the bound arguments of report buckets in the table's
// column order.
func reportArgs(buckets []reportBucket) []any {
	args := make([]any, 0, len(buckets)*bucketUpserts[reportRollups].n)
	for _, bk := range buckets {
		k, v := bk.k, bk.s
		args = append(args, k.dim, dbTime(k.day), k.value, k.typ,
			v.Requests, v.InputTokens, v.OutputTokens, v.CacheReadTokens, v.Quota, v.UpstreamCostPico, v.Errors)
	}
	return args
}

// addReportRollups adds daily buckets to the report rollups, after the
// daily layer (the order every writer locks in).
func addReportRollups(ctx context.Context, tx *sql.Tx, b *batchStmts, daily []rollupBucket) error {
	return upsert(ctx, tx, b, reportRollups, reportArgs(reportBuckets(daily)))
}

// reportsReadyQuery reads the report range and whether a marked row waits
// above it.
const reportsReadyQuery = "SELECT report_next_id, report_below_id, CASE WHEN EXISTS (SELECT 1 FROM usage_logs " +
	"WHERE report_pending = 1 AND id >= b.report_below_id) THEN 1 ELSE 0 END FROM usage_rollup_backfill b WHERE b.id = 1"

// reportsReady is false while the report range has rows left or a row of
// an earlier release waits to be folded: the daily buckets are read then.
func (r rollupRepo) reportsReady(ctx context.Context) (bool, error) {
	var next, below, pending int64
	err := r.s.db.QueryRowContext(ctx, reportsReadyQuery).Scan(&next, &below, &pending)
	return next >= below && pending == 0, wrap(err, "report rollup watermark")
}

// reportBackfill folds up to limit rows into the report rollups within
// tx, which holds the watermark's lock: first the range of rows there were
// when they were added (moving its start past them), then the rows marked
// since (clearing their marks).
func (r rollupRepo) reportBackfill(ctx context.Context, tx *sql.Tx, b *batchStmts, limit int) (more bool, err error) {
	var next, below int64
	if err := tx.QueryRowContext(ctx, "SELECT report_next_id, report_below_id FROM usage_rollup_backfill WHERE id = 1").Scan(&next, &below); err != nil {
		return false, err
	}
	q, args := logSelect+" WHERE id >= ? AND id < ? ORDER BY id LIMIT ?", []any{next, below, limit}
	if next >= below {
		q, args = logSelect+" WHERE report_pending = 1 AND id >= ? ORDER BY id LIMIT ?", []any{below, limit}
		if r.s.dialect != SQLite {
			q += " FOR UPDATE"
		}
	}
	rows, err := tx.QueryContext(ctx, r.s.Rebind(q), args...)
	if err != nil {
		return false, err
	}
	logs, err := collect(rows, scanLog)
	if err != nil || len(logs) == 0 && next >= below {
		return false, err
	}
	hourly, _ := foldRollups(logs, now(), false)
	if err := addReportRollups(ctx, tx, b, dailyBuckets(hourly)); err != nil {
		return false, err
	}
	if next < below {
		to := below
		if len(logs) == limit {
			to = logs[len(logs)-1].ID + 1
		}
		_, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE usage_rollup_backfill SET report_next_id = ? WHERE id = 1"), to)
		return to < below, err
	}
	ids := make([]any, len(logs))
	for i, l := range logs {
		ids[i] = l.ID
	}
	_, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE usage_logs SET report_pending = NULL WHERE id IN (?"+
		strings.Repeat(", ?", len(ids)-1)+")"), ids...)
	return len(logs) == limit, err
}
