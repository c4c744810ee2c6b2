package books_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/books"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// BenchmarkBooksAtScale seeds TURNPIKE_SCALE_ROWS usage rows (say
// 10000000) over 120 days into PostgreSQL and prints the p50 and p95 of
// the usage log's pages and the 30-day reports (CONTRACT §20). It runs only
// when asked: go test -run '^$' -bench BooksAtScale ./internal/books/ with
// TURNPIKE_SCALE_ROWS and TURNPIKE_TEST_POSTGRES set. TURNPIKE_SCALE_DSN
// names a database to keep between runs (seeded once); otherwise a schema
// of its own is seeded and dropped. TURNPIKE_SCALE_ONLY (a regular
// expression) picks queries by name and TURNPIKE_SCALE_RUNS sets the runs
// of each.
func BenchmarkBooksAtScale(b *testing.B) {
	rows, _ := strconv.Atoi(os.Getenv("TURNPIKE_SCALE_ROWS"))
	base := os.Getenv("TURNPIKE_TEST_POSTGRES")
	if rows <= 0 || base == "" {
		b.Skip("set TURNPIKE_SCALE_ROWS and TURNPIKE_TEST_POSTGRES to run")
	}
	dsn := os.Getenv("TURNPIKE_SCALE_DSN")
	if dsn == "" {
		dsn = testdb.Postgres(b, base)
	}
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	raw := testdb.Open(b, "pgx", dsn)
	exec := func(q string, args ...any) error { _, err := raw.Exec(q, args...); return err }
	var have int
	if err := raw.QueryRow("SELECT COUNT(*) FROM usage_logs").Scan(&have); err != nil {
		b.Fatal(err)
	}
	ready, err := st.Rollups().Ready(ctx)
	if err != nil {
		b.Fatal(err)
	}
	end := seedScale(b, exec, have, rows, ready)
	seeded := seedLedger(b, exec, func(q string) (n int) {
		if err := raw.QueryRow(q).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}, end)
	if seeded || have < rows || !ready {
		// The seed wrote its rows and entries around the billing writer:
		// their books buckets are summed from them.
		start := time.Now()
		if err := st.RebuildBooksRollups(ctx); err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{`VACUUM ANALYZE quota_ledger`, `VACUUM ANALYZE ledger_rollups_daily`, `VACUUM ANALYZE usage_books_daily`} {
			if err := exec(q); err != nil {
				b.Fatal(err)
			}
		}
		fmt.Printf("summed the books rollups in %.0f s\n", time.Since(start).Seconds())
	}
	if ready, err := st.Rollups().ChannelsReady(ctx); err != nil || !ready {
		seedChannels(b, exec)
	}
	var reports bool
	if err := raw.QueryRow(`SELECT report_next_id >= report_below_id FROM usage_rollup_backfill`).Scan(&reports); err != nil {
		b.Fatal(err)
	}
	if seeded || have < rows || !ready || !reports {
		seedReports(b, exec)
	}
	// A database seeded by an earlier build got its daily rollups from
	// migration 166 just now: give the planner their statistics.
	if err := exec(`ANALYZE usage_rollups_daily`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	only := regexp.MustCompile(os.Getenv("TURNPIKE_SCALE_ONLY"))
	for _, q := range scaleQueries(st, end) {
		if slowRuns[q.name] == 5 && os.Getenv("TURNPIKE_SCALE_SLOW") == "" || !only.MatchString(q.name) {
			continue // minutes a run at 10M rows: only when asked
		}
		runs := 40
		if n := slowRuns[q.name]; n > 0 {
			runs = n
		}
		if n, _ := strconv.Atoi(os.Getenv("TURNPIKE_SCALE_RUNS")); n > 0 {
			runs = n
		}
		p50, p95 := timeQuery(b, q.run, runs)
		b.ReportMetric(float64(p95.Microseconds())/1000, strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(q.name)+"_p95_ms")
		fmt.Printf("%-34s p50 %7.1f ms   p95 %7.1f ms\n", q.name, ms(p50), ms(p95))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type scaleQuery struct {
	name string
	run  func(context.Context) error
}

// slowRuns are the runs of the reads that took seconds (40 for the
// others); those of 5 run only with TURNPIKE_SCALE_SLOW set. The cache
// report by key and the provider comparison read the channel rollups now
// (migration 220) and run 40 times like the other reports.
var slowRuns = map[string]int{"reconcile 30d": 5, "reconcile 120d": 5}

func scaleQueries(st store.Store, end time.Time) []scaleQuery {
	page := store.Page{Page: 1, PageSize: 20}
	list := func(f store.LogFilter) func(context.Context) error {
		return func(ctx context.Context) error { _, err := st.Logs().Page(ctx, f, page); return err }
	}
	month := store.Window{Since: end.AddDate(0, 0, -30).Add(17 * time.Minute), Until: end}
	// The console asks for the 30 UTC days up to now, today included: its
	// window ends inside an hour of today.
	dashboard := store.Window{Since: end.AddDate(0, 0, -30), Until: end.Add(-7*time.Hour - 23*time.Minute)}
	theirs, err := books.ParseProviderCSV(strings.NewReader(providerExport(end)))
	if err != nil {
		panic(err)
	}
	report := func(by string) func(context.Context) error {
		return func(ctx context.Context) error { _, err := books.UsageReport(ctx, st, month, by, "day"); return err }
	}
	return []scaleQuery{
		{"logs first page", list(store.LogFilter{})},
		{"logs by key", list(store.LogFilter{TokenID: 85})},
		{"logs by user", list(store.LogFilter{UserID: 42})},
		{"logs by model", list(store.LogFilter{Model: "model-7"})},
		{"logs by channel", list(store.LogFilter{ChannelID: 13})},
		{"logs by type (error)", list(store.LogFilter{Type: store.LogError})},
		{"logs deep page (cursor)", list(store.LogFilter{BeforeID: 1000})},
		{"usage 30d by model per day", report(store.DimModel)},
		{"usage 30d by user per day", report(store.DimUser)},
		{"usage 30d by channel per day", report(store.DimChannel)},
		{"margin 30d by channel", func(ctx context.Context) error {
			_, err := books.Margin(ctx, st, month, "channel", 500000)
			return err
		}},
		{"cache 30d by model", func(ctx context.Context) error { _, err := books.Cache(ctx, st, month, "model"); return err }},
		{"usage 30d by key per day", report(store.DimToken)},
		{"usage 30d by team per day", report(store.DimTeam)},
		{"margin 30d by user", func(ctx context.Context) error {
			_, err := books.Margin(ctx, st, month, "user", 500000)
			return err
		}},
		{"cache 30d by channel", func(ctx context.Context) error { _, err := books.Cache(ctx, st, month, "channel"); return err }},
		{"dashboard: a user's 30d per day", func(ctx context.Context) error {
			_, err := books.FilteredUsageReport(ctx, st, dashboard, store.DimModel, "day", books.UsageFilter{UserID: 42})
			return err
		}},
		{"team usage 30d by user", func(ctx context.Context) error {
			_, err := books.TeamUsage(ctx, st, 3, month, "user")
			return err
		}},
		{"provider: a channel's 30 days", func(ctx context.Context) error {
			_, err := books.CompareProvider(ctx, st, 13, theirs)
			return err
		}},
		{"cache 30d by key", func(ctx context.Context) error { _, err := books.Cache(ctx, st, month, "key"); return err }},
		{"reconcile 30d", func(ctx context.Context) error { return reconcileOK(ctx, st, month) }},
		{"reconcile 120d", func(ctx context.Context) error {
			return reconcileOK(ctx, st, store.Window{Since: end.AddDate(0, 0, -120), Until: end})
		}},
	}
}

// reconcileOK fails a reconciliation of the seed that is not ok: its
// ledger matches its rows, so a difference is a fault of the reading.
func reconcileOK(ctx context.Context, st store.Store, w store.Window) error {
	rep, err := books.Reconcile(ctx, st, w, time.Now())
	if err == nil && !rep.OK {
		err = fmt.Errorf("the seed does not reconcile over %v: %d differences, the first %+v", w, len(rep.Differences), rep.Differences[0])
	}
	return err
}

// providerExport is a provider's export of the 30 days before end for the
// model channel 13 serves in the seed.
func providerExport(end time.Time) string {
	var b strings.Builder
	b.WriteString(strings.Join(books.ProviderHeader, ",") + "\n")
	for d := end.AddDate(0, 0, -30); d.Before(end); d = d.AddDate(0, 0, 1) {
		fmt.Fprintf(&b, "%s,model-6,2100,1150000,420000,12.5\n", d.Format(time.DateOnly))
	}
	return b.String()
}

func timeQuery(b *testing.B, run func(context.Context) error, n int) (p50, p95 time.Duration) {
	ctx := context.Background()
	if err := run(ctx); err != nil { // warm the cache as a live gateway's would be
		b.Fatal(err)
	}
	took := make([]time.Duration, n)
	for i := range took {
		start := time.Now()
		if err := run(ctx); err != nil {
			b.Fatal(err)
		}
		took[i] = time.Since(start)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	return took[n/2], took[n*95/100]
}

// seedScale fills usage_logs with rows generated by the server itself (one
// INSERT … SELECT per million rows: no round trip per row; written as the
// billing writer writes them, not marked as pending a rollup), builds the
// hourly rollups (again when they are not ready, as after migration 200
// emptied them) from them with one aggregate and the daily ones from
// those (written in time order, as the billing writer adds them hour by
// hour: an aggregate's hash order would scatter an hour's buckets over the
// whole table), marks the backfill done, and returns the end of the
// seeded span. 200 users with 2 keys each, each
// user on one of 20 models served by 2 of 40 channels, 13 teams; 1 row in
// 50 an error, 1 in 40 a refund.
func seedScale(b *testing.B, exec func(string, ...any) error, have, rows int, ready bool) time.Time {
	end := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	if have >= rows && ready {
		return end
	}
	start := time.Now()
	span := 120 * 24 * time.Hour
	step := span.Microseconds() / int64(rows)
	for lo := have; lo < rows; lo += 1_000_000 {
		hi := min(lo+1_000_000, rows)
		err := exec(`INSERT INTO usage_logs (type, user_id, token_id, channel_id, model, prompt_tokens, completion_tokens,
			quota, latency_ms, request_id, other, created_at, team_id, org_id, rollup_pending, channel_pending)
		SELECT CASE WHEN i % 50 = 0 THEN 'error' WHEN i % 40 = 0 THEN 'refund' ELSE 'consume' END,
			i % 200 + 1, (i % 200 + 1) * 2 + (i / 200) % 2, ((i % 200 + 1) % 20) * 2 + (i / 400) % 2 + 1,
			'model-' || ((i % 200 + 1) % 20), 200 + i % 700, 50 + i % 300,
			CASE WHEN i % 50 = 0 THEN 0 ELSE 100 + i % 5000 END, 300 + i % 2000, 'req-' || i,
			'{"cache_read_tokens":' || (i % 200) || ',"upstream_cost_usd":"0.' || lpad((i % 999999)::text, 6, '0') || '"}',
			$1::timestamptz + (i * $2) * interval '1 microsecond', (i % 200 + 1) % 13, 0, NULL, NULL
		FROM generate_series($3::bigint, $4::bigint - 1) AS i`, end.Add(-span), step, lo, hi)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("seeded %d rows (%.0f s)\n", hi, time.Since(start).Seconds())
	}
	for _, q := range []string{`DELETE FROM usage_rollups`, `INSERT INTO usage_rollups (hour, day, user_id, token_id, model, channel_id, team_id, type, requests, input_tokens, output_tokens,
		cache_read_tokens, quota, upstream_cost_pico, errors)
	SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
		user_id, token_id, model, channel_id, team_id, type, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),
		SUM((other::json->>'cache_read_tokens')::bigint), SUM(quota),
		SUM(((other::json->>'upstream_cost_usd')::numeric * 1000000000000)::bigint), SUM(CASE WHEN type = 'error' THEN 1 ELSE 0 END)
	FROM usage_logs GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ORDER BY 1`,
		`DELETE FROM usage_rollups_daily`, `INSERT INTO usage_rollups_daily (day, user_id, token_id, model, channel_id, team_id, type, requests, input_tokens, output_tokens,
		cache_read_tokens, quota, upstream_cost_pico, errors)
	SELECT day, user_id, token_id, model, channel_id, team_id, type, SUM(requests), SUM(input_tokens), SUM(output_tokens),
		SUM(cache_read_tokens), SUM(quota), SUM(upstream_cost_pico), SUM(errors)
	FROM usage_rollups GROUP BY day, user_id, token_id, model, channel_id, team_id, type ORDER BY day`,
		`UPDATE usage_rollup_backfill SET next_id = (SELECT MAX(id) + 1 FROM usage_logs), below_id = (SELECT MAX(id) + 1 FROM usage_logs)`,
		`VACUUM ANALYZE usage_logs`, `VACUUM ANALYZE usage_rollups`, `VACUUM ANALYZE usage_rollups_daily`} {
		if err := exec(q); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("seeded %d rows and their rollups in %.0f s\n", rows, time.Since(start).Seconds())
	return end
}

// seedChannels builds the channel rollups of the seeded rows with one
// aggregate per layer, in time order, and marks their backfill done (a
// database seeded before them has every row in their range). The seed's
// rows name no upstream model and no attempts: every row is its
// channel's key 0 and its own model's name.
func seedChannels(b *testing.B, exec func(string, ...any) error) {
	start := time.Now()
	sums := `SUM(CASE WHEN type = 'consume' THEN 1 ELSE 0 END), SUM(CASE WHEN type = 'refund' THEN 1 ELSE 0 END),
		SUM(CASE WHEN type = 'consume' THEN 1 ELSE 0 END), SUM(CASE WHEN type = 'consume' THEN prompt_tokens ELSE 0 END),
		SUM(CASE WHEN type = 'consume' THEN completion_tokens ELSE 0 END),
		SUM(CASE WHEN type = 'consume' THEN (other::json->>'cache_read_tokens')::bigint ELSE 0 END),
		SUM(CASE WHEN type = 'refund' THEN -1 ELSE 1 END * ((other::json->>'upstream_cost_usd')::numeric * 1000000000000)::bigint), COUNT(*)`
	cols := `consumes, refunds, requests, input_tokens, output_tokens, cache_read_tokens, upstream_cost_pico, cost_rows`
	for _, q := range []string{`DELETE FROM usage_channel_rollups`, `INSERT INTO usage_channel_rollups (hour, day, channel_id, key_index, model, upstream_model, ` + cols + `)
	SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
		channel_id, 0, model, model, ` + sums + `
	FROM usage_logs WHERE type IN ('consume', 'refund') AND channel_id <> 0 GROUP BY 1, 2, 3, 5 ORDER BY 1`,
		`DELETE FROM usage_channel_rollups_daily`, `INSERT INTO usage_channel_rollups_daily (day, channel_id, key_index, model, upstream_model, ` + cols + `)
	SELECT day, channel_id, key_index, model, upstream_model, SUM(consumes), SUM(refunds), SUM(requests), SUM(input_tokens), SUM(output_tokens),
		SUM(cache_read_tokens), SUM(upstream_cost_pico), SUM(cost_rows)
	FROM usage_channel_rollups GROUP BY day, channel_id, key_index, model, upstream_model ORDER BY day`,
		`UPDATE usage_rollup_backfill SET channel_next_id = (SELECT MAX(id) + 1 FROM usage_logs), channel_below_id = (SELECT MAX(id) + 1 FROM usage_logs)`,
		`VACUUM ANALYZE usage_channel_rollups`, `VACUUM ANALYZE usage_channel_rollups_daily`} {
		if err := exec(q); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("built the channel rollups in %.0f s\n", time.Since(start).Seconds())
}
