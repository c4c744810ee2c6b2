package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Rollups returns the hourly rollups of the usage rows.
func (s *Store) Rollups() store.RollupRepo { return rollupRepo{s} }

type rollupRepo struct{ s *Store }

const rollupKeyCols = "hour, user_id, token_id, model, channel_id, team_id, type"

const rollupSumCols = "requests, input_tokens, output_tokens, cache_read_tokens, quota, upstream_cost_pico, errors"

// rollupCols is the number of columns one bucket writes: day, the key and
// the sums.
const rollupCols = 1 + 7 + 7

// rollupChunk bounds the buckets of one upsert statement.
const rollupChunk = 200

type rollupBucket struct {
	k store.RollupKey
	s store.RollupSums
}

// foldRollups sums rows into their buckets, in key order so that two
// writers' transactions lock shared buckets in the same order and never
// deadlock each other.
func foldRollups(logs []store.UsageLog, stamp time.Time) []rollupBucket {
	at := map[store.RollupKey]int{}
	var out []rollupBucket
	for _, l := range logs {
		if l.CreatedAt.IsZero() {
			l.CreatedAt = stamp
		}
		k, s := store.RollupOf(l)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, rollupBucket{k: k})
		}
		out[i].s.Add(s)
	}
	sort.Slice(out, func(i, j int) bool { return rollupLess(out[i].k, out[j].k) })
	return out
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

// addRollups adds the rows of one billing batch to their buckets within
// the batch's transaction: one multi-row upsert per rollupChunk buckets.
func (s *Store) addRollups(ctx context.Context, tx *sql.Tx, logs []store.UsageLog, stamp time.Time) error {
	buckets := foldRollups(logs, stamp)
	for lo := 0; lo < len(buckets); lo += rollupChunk {
		part := buckets[lo:min(lo+rollupChunk, len(buckets))]
		args := make([]any, 0, len(part)*rollupCols)
		for _, b := range part {
			k, v := b.k, b.s
			args = append(args, dbTime(k.Hour.Truncate(24*time.Hour)), dbTime(k.Hour), k.UserID, k.TokenID, k.Model, k.ChannelID, k.TeamID, k.Type,
				v.Requests, v.InputTokens, v.OutputTokens, v.CacheReadTokens, v.Quota, v.UpstreamCostPico, v.Errors)
		}
		if _, err := tx.ExecContext(ctx, s.rollupUpsert(len(part)), args...); err != nil {
			return err
		}
	}
	return nil
}

// rollupUpsert is the statement that adds n buckets to the table.
func (s *Store) rollupUpsert(n int) string {
	q := "INSERT INTO usage_rollups (day, " + rollupKeyCols + ", " + rollupSumCols + ") VALUES " + rowsSQL(rollupCols, n)
	sums := strings.Split(rollupSumCols, ", ")
	sets := make([]string, len(sums))
	for i, c := range sums {
		if s.dialect == MySQL {
			sets[i] = c + " = " + c + " + VALUES(" + c + ")"
		} else {
			sets[i] = c + " = usage_rollups." + c + " + excluded." + c
		}
	}
	if s.dialect == MySQL {
		return q + " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
	}
	return s.Rebind(q + " ON CONFLICT (" + rollupKeyCols + ") DO UPDATE SET " + strings.Join(sets, ", "))
}

// rollupDimCols maps a dimension to its column.
var rollupDimCols = map[string]string{store.DimUser: "user_id", store.DimToken: "token_id", store.DimModel: "model",
	store.DimChannel: "channel_id", store.DimTeam: "team_id"}

// Sum is one aggregate over the buckets of the window's hours.
func (r rollupRepo) Sum(ctx context.Context, q store.RollupQuery) ([]store.RollupLine, error) {
	group := "''"
	if q.GroupBy != "" {
		col, ok := rollupDimCols[q.GroupBy]
		if !ok {
			return nil, fmt.Errorf("rollups have no dimension %q", q.GroupBy)
		}
		group = col
		if col != "model" {
			group = r.s.castText(col)
		}
	}
	period := ""
	switch q.Granularity {
	case "day", "hour":
		period = q.Granularity + ", "
	}
	where := "hour >= ? AND hour < ?"
	args := []any{dbTime(q.Since), dbTime(q.Until)}
	if len(q.Types) > 0 {
		where += " AND type IN (?" + strings.Repeat(", ?", len(q.Types)-1) + ")"
		for _, t := range q.Types {
			args = append(args, t)
		}
	}
	sums := make([]string, 0, 7)
	for _, c := range strings.Split(rollupSumCols, ", ") {
		if c != "upstream_cost_pico" {
			c = r.s.castInt("SUM(" + c + ")")
		} else {
			c = "SUM(" + c + ")"
		}
		sums = append(sums, c)
	}
	groupBy := "1, 2"
	if period != "" {
		groupBy = "1, 2, 3"
	}
	stmt := "SELECT " + group + ", " + period + "type, " + strings.Join(sums, ", ") + " FROM usage_rollups WHERE " + where + " GROUP BY " + groupBy
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(stmt), args...)
	if err != nil {
		return nil, wrap(err, "sum rollups")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.RollupLine, error) {
		return scanRollupLine(row, period != "")
	})
	return out, wrap(err, "sum rollups")
}

func scanRollupLine(row interface{ Scan(...any) error }, withPeriod bool) (store.RollupLine, error) {
	var l store.RollupLine
	var cost sql.NullString
	dst := []any{&l.Group}
	if withPeriod {
		dst = append(dst, &l.Period)
	}
	dst = append(dst, &l.Type, &l.Requests, &l.InputTokens, &l.OutputTokens, &l.CacheReadTokens, &l.Quota, &cost, &l.Errors)
	err := row.Scan(dst...)
	l.Period = l.Period.UTC()
	l.UpstreamCost = new(big.Int)
	if cost.Valid {
		// PostgreSQL and MySQL sum to a decimal; its digits are an integer.
		l.UpstreamCost.SetString(strings.SplitN(cost.String, ".", 2)[0], 10)
	}
	return l, err
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
