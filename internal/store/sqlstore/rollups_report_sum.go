package sqlstore

import (
	"context"
	"database/sql"
	"math/big"
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
		// Every sum here fits an int64, the cost too: it is part of one
		// day's bucket, which is a BIGINT column.
		outer := make([]string, len(sums))
		for i, c := range sums {
			outer[i] = r.s.castInt("SUM(" + c + ")")
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
	out, err := scanReportLines(rows)
	if err != nil {
		return nil, wrap(err, "sum report rollups")
	}
	if len(hours) > 0 {
		out = foldLines(out)
	}
	return slices.DeleteFunc(out, store.RollupLine.Empty), nil
}

// scanReportLines reads the lines of sumReports through one set of
// destinations: a report by key is 12,000 lines, and a line scanned into
// destinations of its own was a heap object of its own.
func scanReportLines(rows *sql.Rows) ([]store.RollupLine, error) {
	defer rows.Close()
	var out []store.RollupLine
	var cur store.RollupLine
	var typ sql.RawBytes
	var cost int64
	dst := []any{&cur.Group, &cur.Period, &typ, &cur.Requests, &cur.InputTokens, &cur.OutputTokens, &cur.CacheReadTokens,
		&cur.Quota, &cost, &cur.Errors}
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		l := cur
		l.Period, l.Type, l.UpstreamCost = l.Period.UTC(), logType(typ), big.NewInt(cost)
		out = append(out, l)
	}
	return out, rows.Err()
}

// logType is the type read as typ, one string for the known ones.
func logType(typ []byte) string {
	switch string(typ) {
	case store.LogConsume:
		return store.LogConsume
	case store.LogRefund:
		return store.LogRefund
	case store.LogError:
		return store.LogError
	}
	return string(typ)
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
