package sqlstore

import (
	"context"
	"slices"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// sumReports is Sum per day over the report rollups, for a query with a
// dimension and no filter: the window's whole days are that dimension's
// buckets as they are (one per line; nothing for the server to hash), and
// its cut days' hours are summed from the hourly layer in the same
// statement, so both come from one snapshot. A line of a day read both
// ways (a day less its hours outside the window) is folded here.
func (r rollupRepo) sumReports(ctx context.Context, q store.RollupQuery, col string) ([]store.RollupLine, error) {
	sums := strings.Split(rollupSumCols, ", ")
	var days, hours []string
	var dayArgs, hourArgs []any
	for _, sp := range q.Spans() {
		if sp.Daily {
			w, a := rollupWhere("day", sp.Since, sp.Until, q)
			days = append(days, "SELECT dim_value, day, type, "+rollupSumCols+" FROM usage_report_daily WHERE dim = ? AND "+w)
			dayArgs = append(append(dayArgs, q.GroupBy), a...)
			continue
		}
		vals := make([]string, len(sums))
		for i, c := range sums {
			vals[i] = c
			if sp.Less {
				vals[i] = "-" + c + " AS " + c
			}
		}
		w, a := rollupWhere("hour", sp.Since, sp.Until, q)
		hours = append(hours, "SELECT "+col+", day, type, "+strings.Join(vals, ", ")+" FROM usage_rollups WHERE "+w)
		hourArgs = append(hourArgs, a...)
	}
	if len(hours) > 0 {
		outer := make([]string, len(sums))
		for i, c := range sums {
			outer[i] = "SUM(" + c + ")"
			if c != "upstream_cost_pico" {
				outer[i] = r.s.castInt(outer[i])
			}
		}
		group := col
		if col != "model" {
			group = r.s.castText(col)
		}
		days = append(days, "SELECT "+group+", day, type, "+strings.Join(outer, ", ")+" FROM ("+
			strings.Join(hours, " UNION ALL ")+") hours GROUP BY "+col+", day, type")
	}
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(strings.Join(days, " UNION ALL ")), append(dayArgs, hourArgs...)...)
	if err != nil {
		return nil, wrap(err, "sum report rollups")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.RollupLine, error) {
		return scanRollupLine(row, true)
	})
	if err != nil {
		return nil, wrap(err, "sum report rollups")
	}
	if len(hours) > 0 {
		out = foldLines(out)
	}
	return slices.DeleteFunc(out, store.RollupLine.Empty), nil
}

// foldLines adds up the lines of the same group, period and type, keeping
// the first of each in place.
func foldLines(lines []store.RollupLine) []store.RollupLine {
	type key struct {
		group  string
		period int64
		typ    string
	}
	at := make(map[key]int, len(lines))
	out := lines[:0]
	for _, l := range lines {
		k := key{l.Group, l.Period.UnixMicro(), l.Type}
		if j, ok := at[k]; ok {
			out[j].RollupSums.Add(l.RollupSums)
			out[j].UpstreamCost.Add(out[j].UpstreamCost, l.UpstreamCost)
			continue
		}
		at[k] = len(out)
		out = append(out, l)
	}
	return out
}
