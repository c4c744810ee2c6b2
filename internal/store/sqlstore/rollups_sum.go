package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Sum is one statement over the spans of the window (store.RollupQuery
// Spans): the buckets of each span, negated for a span taken away, summed
// per group, period and type. One statement reads one snapshot on every
// dialect, so a day's bucket and the hours taken from it agree even while
// the billing writer adds to both. A line whose sums are all zero is left
// out: it is a group whose calls of the cut day all fell in the hours
// taken away, which has nothing in the window.
func (r rollupRepo) Sum(ctx context.Context, q store.RollupQuery) ([]store.RollupLine, error) {
	// Grouped by the columns themselves and cast once per group: hashing
	// integers is about twice as fast as hashing their text per bucket.
	col, group := "''", "''"
	if q.GroupBy != "" {
		var ok bool
		if col, ok = rollupDimCols[q.GroupBy]; !ok {
			return nil, fmt.Errorf("rollups have no dimension %q", q.GroupBy)
		}
		group = col
		if col != "model" {
			group = r.s.castText(col)
		}
	}
	if q.Days && q.Granularity == "hour" {
		return nil, fmt.Errorf("the daily rollups have no hours")
	}
	if q.Days && q.Granularity == "day" && q.GroupBy != "" && q.UserID == 0 && q.TeamID == 0 {
		ready, err := r.reportsReady(ctx)
		if err != nil {
			return nil, err
		}
		if ready {
			return r.sumReports(ctx, q, col)
		}
	}
	period := ""
	switch q.Granularity {
	case "day", "hour":
		period = q.Granularity + ", "
	}
	groupBy := period + "type"
	if q.GroupBy != "" {
		groupBy = col + ", " + groupBy
	}
	sums := strings.Split(rollupSumCols, ", ")
	outer := make([]string, len(sums))
	for i, c := range sums {
		outer[i] = "SUM(" + c + ")"
		if c != "upstream_cost_pico" {
			outer[i] = r.s.castInt(outer[i])
		}
	}
	from, args := r.spansFrom(q, col, period, sums)
	stmt := "SELECT " + group + ", " + period + "type, " + strings.Join(outer, ", ") + " FROM " + from + " GROUP BY " + groupBy
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(stmt), args...)
	if err != nil {
		return nil, wrap(err, "sum rollups")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.RollupLine, error) {
		return scanRollupLine(row, period != "")
	})
	return slices.DeleteFunc(out, store.RollupLine.Empty), wrap(err, "sum rollups")
}

// usageLayers are the hourly and the daily table of the usage rollups.
var usageLayers = [2]string{"usage_rollups", "usage_rollups_daily"}

// spansFrom is what Sum reads: the one table and condition of a single
// span, or the union of every span's buckets (negated where taken away).
func (r rollupRepo) spansFrom(q store.RollupQuery, col, period string, sums []string) (string, []any) {
	keep := period + "type, "
	if col != "''" {
		keep = col + ", " + keep
	}
	return unionSpans(q.Spans(), usageLayers, keep, sums, func(at string, sp store.RollupSpan) (string, []any) {
		return rollupWhere(at, sp.Since, sp.Until, q)
	})
}

// unionSpans is the FROM of a query over spans of the hourly and daily
// tables of layers: the one table and condition (where) of a single span,
// or the union of every span's keep columns and sums, negated where the
// span is taken away.
func unionSpans(spans []store.RollupSpan, layers [2]string, keep string, sums []string,
	where func(at string, sp store.RollupSpan) (string, []any)) (string, []any) {
	table := func(sp store.RollupSpan) (string, string) {
		if sp.Daily {
			return layers[1], "day"
		}
		return layers[0], "hour"
	}
	if len(spans) == 1 {
		t, at := table(spans[0])
		w, args := where(at, spans[0])
		return t + " WHERE " + w, args
	}
	var parts []string
	var args []any
	for _, sp := range spans {
		t, at := table(sp)
		w, a := where(at, sp)
		vals := strings.Join(sums, ", ")
		if sp.Less {
			vals = "-" + strings.Join(sums, ", -")
		}
		parts = append(parts, "SELECT "+keep+vals+" FROM "+t+" WHERE "+w)
		args = append(args, a...)
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ") spans", args
}

// rollupWhere is the condition of a rollup query's span: the range of its
// hours or days, its types and its filters.
func rollupWhere(at string, since, until time.Time, q store.RollupQuery) (string, []any) {
	where := at + " >= ? AND " + at + " < ?"
	args := []any{dbTime(since), dbTime(until)}
	if len(q.Types) > 0 {
		where += " AND type IN (?" + strings.Repeat(", ?", len(q.Types)-1) + ")"
		for _, t := range q.Types {
			args = append(args, t)
		}
	}
	if q.UserID != 0 {
		where += " AND user_id = ?"
		args = append(args, q.UserID)
	}
	if q.TeamID != 0 {
		where += " AND team_id = ?"
		args = append(args, q.TeamID)
	}
	return where, args
}
