package sqlstore

import (
	"context"
	"database/sql"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Rollups returns the hourly rollups of the usage rows.
func (s *Store) Rollups() store.RollupRepo { return rollupRepo{s} }

type rollupRepo struct{ s *Store }

const rollupKeyCols = "hour, user_id, token_id, model, channel_id, team_id, type"

// dailyKeyCols is the daily layer's key: the day in place of the hour.
const dailyKeyCols = "day, user_id, token_id, model, channel_id, team_id, type"

const rollupSumCols = "requests, input_tokens, output_tokens, cache_read_tokens, quota, upstream_cost_pico, errors"

// rollupCols is the number of columns one hourly bucket writes: day, the
// key and the sums; a daily bucket writes one fewer (no hour).
const rollupCols = 1 + 7 + 7

type rollupBucket struct {
	k store.RollupKey
	s store.RollupSums
}

// foldRollups sums rows into their buckets, in key order so that two
// writers' transactions lock shared buckets in the same order and never
// deadlock each other; with channels, their channel buckets too (each
// row's other read once for both).
func foldRollups(logs []store.UsageLog, stamp time.Time, channels bool) ([]rollupBucket, []channelBucket) {
	keys := make([]store.RollupKey, len(logs))
	sums := make([]store.RollupSums, len(logs))
	var perChannel channelFold
	for i, l := range logs {
		if l.CreatedAt.IsZero() {
			l.CreatedAt = stamp
		}
		var ck store.ChannelKey
		var cs store.ChannelSums
		var ok bool
		keys[i], sums[i], ck, cs, ok = store.Rollups(l)
		if channels && ok {
			perChannel.add(ck, cs)
		}
	}
	return foldBuckets(keys, sums), perChannel.buckets()
}

// foldBuckets adds up the sums of equal keys, in key order.
func foldBuckets(keys []store.RollupKey, sums []store.RollupSums) []rollupBucket {
	at := map[store.RollupKey]int{}
	var out []rollupBucket
	for i, k := range keys {
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, rollupBucket{k: k})
		}
		out[j].s.Add(sums[i])
	}
	sort.Slice(out, func(i, j int) bool { return rollupLess(out[i].k, out[j].k) })
	return out
}

// dailyBuckets are the hourly buckets summed per UTC day (the key's Hour
// is the day's midnight).
func dailyBuckets(hourly []rollupBucket) []rollupBucket {
	keys := make([]store.RollupKey, len(hourly))
	sums := make([]store.RollupSums, len(hourly))
	for i, b := range hourly {
		keys[i], sums[i] = b.k, b.s
		keys[i].Hour = b.k.Hour.Truncate(24 * time.Hour)
	}
	return foldBuckets(keys, sums)
}

func rollupLess(a, b store.RollupKey) bool {
	switch {
	case !a.Hour.Equal(b.Hour):
		return a.Hour.Before(b.Hour)
	case a.UserID != b.UserID:
		return a.UserID < b.UserID
	case a.TokenID != b.TokenID:
		return a.TokenID < b.TokenID
	case a.Model != b.Model:
		return a.Model < b.Model
	case a.ChannelID != b.ChannelID:
		return a.ChannelID < b.ChannelID
	case a.TeamID != b.TeamID:
		return a.TeamID < b.TeamID
	}
	return a.Type < b.Type
}

// addRollups adds the rows of one billing batch to their hourly and daily
// buckets within the batch's transaction, through the prepared upserts.
// Every writer locks all its hourly buckets before its daily ones, each
// layer in key order, so writers never deadlock. The billing writer adds
// them to the report and the channel rollups too (channels); the backfill
// of the usage rollups does not, since those have a backfill of their own
// (reportRollupsMigration, channelRollupsMigration).
func (s *Store) addRollups(ctx context.Context, tx *sql.Tx, b *batchStmts, logs []store.UsageLog, stamp time.Time, channels bool) error {
	hourly, perChannel := foldRollups(logs, stamp, channels)
	if err := upsert(ctx, tx, b, hourlyRollups, bucketArgs(hourly, false)); err != nil {
		return err
	}
	daily := dailyBuckets(hourly)
	if err := upsert(ctx, tx, b, dailyRollups, bucketArgs(daily, true)); err != nil {
		return err
	}
	if channels {
		if err := addReportRollups(ctx, tx, b, daily); err != nil {
			return err
		}
	}
	if err := s.addChannelRollups(ctx, tx, b, perChannel); err != nil {
		return err
	}
	return s.addRowBooks(ctx, tx, b, logs, stamp)
}

// addingOnConflict ends the INSERT q into table so that a bucket already
// there (the same keys) gets the new sums added to its own, in the
// dialect's words, and rebinds it.
func (s *Store) addingOnConflict(q, table, keys, sums string) string {
	sets := strings.Split(sums, ", ")
	for i, c := range sets {
		if s.dialect == MySQL {
			sets[i] = c + " = " + c + " + VALUES(" + c + ")"
		} else {
			sets[i] = c + " = " + table + "." + c + " + excluded." + c
		}
	}
	if s.dialect == MySQL {
		return q + " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
	}
	return s.Rebind(q + " ON CONFLICT (" + keys + ") DO UPDATE SET " + strings.Join(sets, ", "))
}

// rollupDimCols maps a dimension to its column.
var rollupDimCols = map[string]string{store.DimUser: "user_id", store.DimToken: "token_id", store.DimModel: "model",
	store.DimChannel: "channel_id", store.DimTeam: "team_id"}

func scanRollupLine(row interface{ Scan(...any) error }, withPeriod bool) (store.RollupLine, error) {
	var l store.RollupLine
	var cost sql.NullString
	var at [11]any // one array a line, not a slice grown per line
	dst := append(at[:0], &l.Group)
	if withPeriod {
		dst = append(dst, &l.Period)
	}
	dst = append(dst, &l.Type, &l.Requests, &l.InputTokens, &l.OutputTokens, &l.CacheReadTokens, &l.Quota, &cost, &l.Errors)
	err := row.Scan(dst...)
	l.Period = l.Period.UTC()
	l.UpstreamCost = sumDigits(cost)
	return l, err
}

// sumDigits reads a SUM of picodollars: PostgreSQL and MySQL sum to a
// decimal, whose digits are an integer; most fit an int64, which is read
// without math/big's parser.
func sumDigits(cost sql.NullString) *big.Int {
	if !cost.Valid {
		return new(big.Int)
	}
	digits, _, _ := strings.Cut(cost.String, ".")
	if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
		return big.NewInt(n)
	}
	n, _ := new(big.Int).SetString(digits, 10)
	if n == nil {
		return new(big.Int)
	}
	return n
}

// castText makes an integer column group as text on every dialect.
func (s *Store) castText(col string) string {
	switch s.dialect {
	case Postgres:
		return "CAST(" + col + " AS TEXT)"
	case MySQL:
		return "CAST(" + col + " AS CHAR)"
	}
	return "CAST(" + col + " AS TEXT)"
}
