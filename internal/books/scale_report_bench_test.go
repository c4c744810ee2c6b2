package books_test

import (
	"fmt"
	"testing"
	"time"
)

// seedReports sums the report rollups from the daily ones (which hold
// every seeded row and the ledger seed's top-ups), one aggregate per
// dimension in day order as the writer adds them, and marks their range
// done: a database seeded before them gets them here rather than from a
// backfill of every row.
func seedReports(b *testing.B, exec func(string, ...any) error) {
	start := time.Now()
	sums := `SUM(requests), SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), SUM(quota), SUM(upstream_cost_pico), SUM(errors)`
	stmts := []string{`DELETE FROM usage_report_daily`}
	for _, d := range []struct{ dim, col string }{
		{"channel", "CAST(channel_id AS TEXT)"}, {"key", "CAST(token_id AS TEXT)"}, {"model", "model"},
		{"team", "CAST(team_id AS TEXT)"}, {"user", "CAST(user_id AS TEXT)"},
	} {
		stmts = append(stmts, `INSERT INTO usage_report_daily (dim, day, dim_value, type, requests, input_tokens, output_tokens,
			cache_read_tokens, quota, upstream_cost_pico, errors)
		SELECT '`+d.dim+`', day, `+d.col+`, type, `+sums+` FROM usage_rollups_daily GROUP BY day, `+d.col+`, type ORDER BY day`)
	}
	stmts = append(stmts, `UPDATE usage_rollup_backfill SET report_next_id = (SELECT MAX(id) + 1 FROM usage_logs),
		report_below_id = (SELECT MAX(id) + 1 FROM usage_logs)`, `VACUUM ANALYZE usage_report_daily`)
	for _, q := range stmts {
		if err := exec(q); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("summed the report rollups in %.0f s\n", time.Since(start).Seconds())
}
