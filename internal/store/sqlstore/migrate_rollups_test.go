package sqlstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// daySums are a store's rollups of [since, since+48h) per model, day and
// type, from the hourly or the daily layer.
func daySums(t *testing.T, s *Store, since time.Time, daily bool) string {
	t.Helper()
	lines, err := s.Rollups().Sum(context.Background(), store.RollupQuery{Since: since, Until: since.Add(48 * time.Hour),
		GroupBy: store.DimModel, Granularity: "day", Days: daily})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%s/%s/%s %v %v", l.Group, l.Period.Format(time.DateOnly), l.Type, l.RollupSums, l.UpstreamCost))
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// An upgrade from a database with hourly rollups only: migration 166 sums
// the days so far from them. On PostgreSQL migration 161 is run again too,
// through its concurrent index builds, and leaves every index valid.
func TestUpgradeSumsTheDailyRollupsAndBuildsTheLogIndexesOnline(t *testing.T) {
	for name, dsn := range upgradeDatabases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openConcrete(t, dsn)
			day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			insertDayRows(t, s, day, 40)
			want := daySums(t, s, day, false)
			undo := []string{"DROP TABLE usage_rollups_daily", "DELETE FROM schema_migrations WHERE version = 166"}
			if s.dialect == Postgres {
				undo = append(undo, "DROP INDEX usage_logs_model_id_idx", "DELETE FROM schema_migrations WHERE version = 161",
					"CREATE INDEX usage_logs_model_idx ON usage_logs (model)")
			}
			undoMigration(t, s, undo)
			again := openConcrete(t, dsn)
			if got := daySums(t, again, day, true); got != want || len(got) < 10 {
				t.Fatalf("daily rollups after the upgrade\n got %s\nwant %s", got, want)
			}
			if again.dialect != Postgres {
				return
			}
			var valid, old int
			err := again.DB().QueryRowContext(ctx, `SELECT COUNT(*) FILTER (WHERE i.indisvalid AND c.relname LIKE 'usage_logs_%_id_idx'),
				COUNT(*) FILTER (WHERE c.relname = 'usage_logs_model_idx')
				FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'usage_logs'::regclass`).Scan(&valid, &old)
			if err != nil || valid != 5 || old != 0 {
				t.Fatalf("after migration 161 online: %d valid list indexes (want 5), old model index %d, %v", valid, old, err)
			}
		})
	}
}

// An upgrade from a database whose rollups missed rows (written by an
// earlier release while this one's migrations ran): migration 200 moves
// the backfill back over every row, which rebuilds the rollups exactly, and
// rows written after it without rollups carry the column's mark.
func TestUpgradeRebuildsTheRollupsAndMarksRowsWrittenWithoutThem(t *testing.T) {
	for name, dsn := range upgradeDatabases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openConcrete(t, dsn)
			day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			insertDayRows(t, s, day, 30)
			want := daySums(t, s, day, true)
			undo := []string{"DROP INDEX usage_logs_rollup_pending_idx", "ALTER TABLE usage_logs DROP COLUMN rollup_pending",
				"DELETE FROM schema_migrations WHERE version = 200", "DELETE FROM usage_rollups WHERE model = 'a'",
				"DELETE FROM usage_rollups_daily WHERE model = 'a'"}
			undoMigration(t, s, undo)
			again := openConcrete(t, dsn)
			if ready, err := again.Rollups().Ready(ctx); err != nil || ready {
				t.Fatalf("ready %v (%v) before the rebuild", ready, err)
			}
			for more := true; more; {
				var err error
				if more, err = again.Rollups().Backfill(ctx, 11); err != nil {
					t.Fatal(err)
				}
			}
			if got := daySums(t, again, day, true); got != want {
				t.Fatalf("rollups rebuilt after the upgrade\n got %s\nwant %s", got, want)
			}
			if _, err := again.DB().ExecContext(ctx, again.Rebind("INSERT INTO usage_logs (type, user_id, token_id, channel_id, model, prompt_tokens, "+
				"completion_tokens, quota, latency_ms, request_id, other, created_at, team_id, org_id) VALUES ('consume', 1, 0, 0, 'a', 1, 1, 5, 0, '', '{}', ?, 0, 0)"),
				dbTime(day)); err != nil {
				t.Fatal(err)
			}
			var marked, kept int
			if err := again.DB().QueryRowContext(ctx, "SELECT COUNT(CASE WHEN rollup_pending = 1 THEN 1 END), COUNT(CASE WHEN rollup_pending IS NULL THEN 1 END) FROM usage_logs WHERE id > 30").Scan(&marked, &kept); err != nil || marked != 1 || kept != 0 {
				t.Fatalf("a row written without rollups: %d marked, %d not (%v)", marked, kept, err)
			}
		})
	}
}

// upgradeDatabases are the databases an upgrade test runs on: a SQLite file
// and, when TURNPIKE_TEST_POSTGRES is set, a fresh PostgreSQL schema.
func upgradeDatabases(t *testing.T) map[string]string {
	dsns := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "up.db")}
	if base := os.Getenv("TURNPIKE_TEST_POSTGRES"); base != "" {
		dsns["postgres"] = testdb.Postgres(t, base)
	}
	return dsns
}

// insertDayRows writes n rows of every type and two models, 71 minutes
// apart from day on, so they span several hours and days.
func insertDayRows(t *testing.T, s *Store, day time.Time, n int) {
	t.Helper()
	var logs []store.UsageLog
	for i := range n {
		logs = append(logs, store.UsageLog{Type: []string{store.LogConsume, store.LogRefund, store.LogError}[i%3], UserID: 1,
			Model: []string{"a", "b"}[i%2], Quota: int64(10 + i), PromptTokens: i, CreatedAt: day.Add(time.Duration(i) * 71 * time.Minute)})
	}
	if err := s.Logs().Insert(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
}

// undoMigration runs undo on s and closes it: the database is then as an
// earlier release left it, for the next open to migrate again.
func undoMigration(t *testing.T, s *Store, undo []string) {
	t.Helper()
	for _, q := range undo {
		if _, err := s.DB().ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
}
