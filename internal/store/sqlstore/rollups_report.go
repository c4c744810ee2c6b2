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

// reportsReady is false while the report range has rows left or a row of
// an earlier release waits to be folded: the daily buckets are read then.
func (r rollupRepo) reportsReady(ctx context.Context) (bool, error) {
	return r.markedReady(ctx, reportFamily)
}
