package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

const channelKeyCols = "channel_id, key_index, model, upstream_model"

const channelSumCols = "consumes, refunds, requests, input_tokens, output_tokens, cache_read_tokens, upstream_cost_pico, cost_rows"

// channelLayers are the hourly and the daily table of the channel rollups.
var channelLayers = [2]string{"usage_channel_rollups", "usage_channel_rollups_daily"}

type channelBucket struct {
	k store.ChannelKey
	s store.ChannelSums
}

// channelFold adds up the sums of equal channel keys as rows come: a
// batch's rows fall in a few buckets (its channels' keys and models), so
// they are added in place rather than listed first.
type channelFold struct {
	at  map[store.ChannelKey]int
	out []channelBucket
}

func (f *channelFold) add(k store.ChannelKey, s store.ChannelSums) {
	if f.at == nil {
		f.at = map[store.ChannelKey]int{}
	}
	j, ok := f.at[k]
	if !ok {
		j = len(f.out)
		f.at[k] = j
		f.out = append(f.out, channelBucket{k: k})
	}
	f.out[j].s.Add(s)
}

// buckets are the sums in key order, so that two writers lock shared
// buckets in the same order.
func (f *channelFold) buckets() []channelBucket {
	slices.SortFunc(f.out, func(a, b channelBucket) int {
		return cmp.Or(a.k.Hour.Compare(b.k.Hour), cmp.Compare(a.k.ChannelID, b.k.ChannelID), cmp.Compare(a.k.KeyIndex, b.k.KeyIndex),
			strings.Compare(a.k.Model, b.k.Model), strings.Compare(a.k.UpstreamModel, b.k.UpstreamModel))
	})
	return f.out
}

// foldChannels is the channel buckets of rows (for the backfill, which
// folds rows into the channel rollups alone).
func foldChannels(logs []store.UsageLog, stamp time.Time) []channelBucket {
	var f channelFold
	for _, l := range logs {
		if l.CreatedAt.IsZero() {
			l.CreatedAt = stamp
		}
		if k, s, ok := store.ChannelRollupOf(l); ok {
			f.add(k, s)
		}
	}
	return f.buckets()
}

// addChannelRollups adds hourly buckets to both layers, all the hourly
// ones before the daily ones, through the prepared upserts.
func (s *Store) addChannelRollups(ctx context.Context, tx *sql.Tx, b *batchStmts, hourly []channelBucket) error {
	if len(hourly) == 0 {
		return nil
	}
	if err := upsert(ctx, tx, b, hourlyChannels, channelArgs(hourly, false)); err != nil {
		return err
	}
	var daily channelFold
	for _, bk := range hourly {
		k := bk.k
		k.Hour = k.Hour.Truncate(24 * time.Hour)
		daily.add(k, bk.s)
	}
	return upsert(ctx, tx, b, dailyChannels, channelArgs(daily.buckets(), true))
}

// channelArgs is the bound arguments of channel buckets, in the hourly or
// the daily table's column order.
func channelArgs(buckets []channelBucket, daily bool) []any {
	cols := bucketUpserts[hourlyChannels].n
	if daily {
		cols = bucketUpserts[dailyChannels].n
	}
	args := make([]any, 0, len(buckets)*cols)
	for _, bk := range buckets {
		k, v := bk.k, bk.s
		args = append(args, dbTime(k.Hour))
		if !daily {
			args = append(args, dbTime(k.Hour.Truncate(24*time.Hour)))
		}
		args = append(args, k.ChannelID, k.KeyIndex, k.Model, k.UpstreamModel,
			v.Consumes, v.Refunds, v.Requests, v.InputTokens, v.OutputTokens, v.CacheReadTokens, v.UpstreamCostPico, v.CostRows)
	}
	return args
}

// SumChannels is one statement over the spans of the window, as Sum.
func (r rollupRepo) SumChannels(ctx context.Context, q store.ChannelQuery) ([]store.ChannelLine, error) {
	if q.Days && q.Granularity == "hour" {
		return nil, fmt.Errorf("the daily rollups have no hours")
	}
	period := ""
	if q.Granularity == "day" {
		period = ", day"
	}
	sums := strings.Split(channelSumCols, ", ")
	outer := make([]string, len(sums))
	for i, c := range sums {
		outer[i] = "SUM(" + c + ")"
		if c != "upstream_cost_pico" {
			outer[i] = r.s.castInt(outer[i])
		}
	}
	from, args := unionSpans(q.Spans(), channelLayers, channelKeyCols+period+", ", sums, func(at string, sp store.RollupSpan) (string, []any) {
		where, args := at+" >= ? AND "+at+" < ?", []any{dbTime(sp.Since), dbTime(sp.Until)}
		if q.ChannelID != 0 {
			where, args = where+" AND channel_id = ?", append(args, q.ChannelID)
		}
		return where, args
	})
	stmt := "SELECT " + channelKeyCols + period + ", " + strings.Join(outer, ", ") + " FROM " + from + " GROUP BY " + channelKeyCols + period
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(stmt), args...)
	if err != nil {
		return nil, wrap(err, "sum channel rollups")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.ChannelLine, error) {
		return scanChannelLine(row, period != "")
	})
	return slices.DeleteFunc(out, store.ChannelLine.Empty), wrap(err, "sum channel rollups")
}

func scanChannelLine(row interface{ Scan(...any) error }, withPeriod bool) (store.ChannelLine, error) {
	var l store.ChannelLine
	var cost sql.NullString
	dst := []any{&l.ChannelID, &l.KeyIndex, &l.Model, &l.UpstreamModel}
	if withPeriod {
		dst = append(dst, &l.Hour)
	}
	dst = append(dst, &l.Consumes, &l.Refunds, &l.Requests, &l.InputTokens, &l.OutputTokens, &l.CacheReadTokens, &cost, &l.CostRows)
	err := row.Scan(dst...)
	l.Hour = l.Hour.UTC()
	l.UpstreamCost = sumDigits(cost)
	return l, err
}

// ChannelsReady is false while the channel range has rows left or a row of
// an earlier release waits to be folded.
func (r rollupRepo) ChannelsReady(ctx context.Context) (bool, error) {
	return r.markedReady(ctx, channelFamily)
}
