package sqlstore

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// reportQueries are per-day sums by every dimension over whole days and
// over a window whose first day is read less its hours outside (Spans).
func reportQueries(day time.Time) []store.RollupQuery {
	var qs []store.RollupQuery
	for _, by := range []string{store.DimUser, store.DimToken, store.DimModel, store.DimChannel, store.DimTeam} {
		qs = append(qs, store.RollupQuery{Since: day, Until: day.Add(72 * time.Hour), GroupBy: by, Granularity: "day", Days: true},
			store.RollupQuery{Since: day.Add(5 * time.Hour), Until: day.Add(50 * time.Hour), GroupBy: by, Granularity: "day", Days: true,
				Types: []string{store.LogConsume, store.LogRefund}})
	}
	return qs
}

// reportSums are a store's sums over q, one line each.
func reportSums(t *testing.T, s *Store, q store.RollupQuery) string {
	t.Helper()
	lines, err := s.Rollups().Sum(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%s %s %s %+v cost %s", l.Group, l.Period.Format(time.DateOnly), l.Type, l.RollupSums, l.UpstreamCost))
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// reportRows are rows of three users, keys, models, channels and teams and
// every type, with costs, 47 minutes apart from day on.
func reportRows(day time.Time, n int) []store.UsageLog {
	logs := channelRows(day, n)
	for i := range logs {
		l := &logs[i]
		l.UserID, l.TokenID, l.TeamID = int64(1+i%3), int64(10+i%4), int64(i%2*7)
		l.CreatedAt = day.Add(time.Duration(i) * 47 * time.Minute)
		if i%9 == 5 {
			l.Type, l.Quota = store.LogError, 0
		}
	}
	return logs
}

// An upgrade from a database without the report rollups: the sums per day
// come from the daily buckets until the backfill has folded the rows there
// are, and from the report rollups after it; rows a node of an earlier
// release writes afterwards (without any rollup) carry the mark and are
// folded once. The answers never change, and equal a fresh store's.
func TestUpgradeFoldsTheRowsThereAreIntoTheReportRollupsAndCatchesUpRowsWrittenWithoutThem(t *testing.T) {
	dsns := map[string]string{"sqlite": "sqlite:" + t.TempDir() + "/reports.db"}
	if base := os.Getenv("TURNPIKE_TEST_POSTGRES"); base != "" {
		dsns["postgres"] = testdb.Postgres(t, base)
	}
	if base := os.Getenv("TURNPIKE_TEST_MYSQL"); base != "" {
		dsns["mysql"] = testdb.MySQL(t, base)
	}
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	queries := reportQueries(day)
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openConcrete(t, dsn)
			logs := reportRows(day, 80)
			if err := s.Logs().Insert(ctx, logs[:60]); err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(queries))
			for i, q := range queries {
				want[i] = reportSums(t, s, q)
			}
			undo := []string{"DROP TABLE usage_report_daily", "DROP INDEX usage_logs_report_pending_idx",
				"ALTER TABLE usage_logs DROP COLUMN report_pending", "ALTER TABLE usage_rollup_backfill DROP COLUMN report_next_id",
				"ALTER TABLE usage_rollup_backfill DROP COLUMN report_below_id", "DELETE FROM schema_migrations WHERE version = 230"}
			if s.dialect == MySQL {
				undo[1] = "DROP INDEX usage_logs_report_pending_idx ON usage_logs"
			}
			undoMigration(t, s, undo)
			again := openConcrete(t, dsn)
			agree := func(when string, want []string) {
				t.Helper()
				for i, q := range queries {
					if got := reportSums(t, again, q); got != want[i] {
						t.Fatalf("%s, by %s %s–%s\n got %s\nwant %s", when, q.GroupBy, q.Since, q.Until, got, want[i])
					}
				}
			}
			catchUp := func(what string) {
				t.Helper()
				if ready, err := again.Rollups().(rollupRepo).reportsReady(ctx); err != nil || ready {
					t.Fatalf("ready %v (%v) with %s not in the report rollups", ready, err, what)
				}
				for more := true; more; {
					var err error
					if more, err = again.Rollups().Backfill(ctx, 7); err != nil {
						t.Fatal(err)
					}
				}
				if ready, err := again.Rollups().(rollupRepo).reportsReady(ctx); err != nil || !ready {
					t.Fatalf("not ready (%v) after the backfill of %s", err, what)
				}
			}
			agree("read from the daily buckets before the backfill", want)
			catchUp("the rows of before the upgrade")
			agree("after the backfill", want)
			// A node of an earlier release (before the rollups: it names
			// no mark) writes rows among the writer's own.
			old := "INSERT INTO usage_logs (type, user_id, token_id, channel_id, model, prompt_tokens, completion_tokens, quota, latency_ms, " +
				"request_id, other, created_at, team_id, org_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, '', ?, ?, ?, 0)"
			for _, l := range logs[60:66] {
				if _, err := again.DB().ExecContext(ctx, again.Rebind(old), l.Type, l.UserID, l.TokenID, l.ChannelID, l.Model,
					l.PromptTokens, l.CompletionTokens, l.Quota, string(l.Other), dbTime(l.CreatedAt), l.TeamID); err != nil {
					t.Fatal(err)
				}
			}
			if err := again.Logs().Insert(ctx, logs[66:]); err != nil {
				t.Fatal(err)
			}
			catchUp("the rows of an earlier release's node")
			fresh := openConcrete(t, "sqlite:"+t.TempDir()+"/fresh.db")
			if err := fresh.Logs().Insert(ctx, logs); err != nil {
				t.Fatal(err)
			}
			all := make([]string, len(queries))
			for i, q := range queries {
				all[i] = reportSums(t, fresh, q)
			}
			agree("after the catch-up (every row once)", all)
		})
	}
}
