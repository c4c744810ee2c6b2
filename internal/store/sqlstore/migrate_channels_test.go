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

// channelSums are a store's channel rollups over q, one line each.
func channelSums(t *testing.T, s *Store, q store.ChannelQuery) string {
	t.Helper()
	lines, err := s.Rollups().SumChannels(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%d#%d %s/%s %s %+v cost %s", l.ChannelID, l.KeyIndex, l.Model, l.UpstreamModel,
			l.Hour.Format(time.DateOnly), l.ChannelSums, l.UpstreamCost))
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// channelRows are consume and refund rows of two channels, three keys and
// two upstream names, with costs, cache reads and a correction row, 53
// minutes apart from day on.
func channelRows(day time.Time, n int) []store.UsageLog {
	var logs []store.UsageLog
	for i := range n {
		l := store.UsageLog{Type: store.LogConsume, UserID: 1, ChannelID: int64(1 + i%2), Model: []string{"a", "b"}[i%2/1],
			PromptTokens: 100 + i, CompletionTokens: i, Quota: int64(10 + i),
			Other: fmt.Appendf(nil, `{"upstream_model":"%s","upstream_cost_usd":"0.00%d","cache_read_tokens":%d,"attempts":[{"key_index":9},{"key_index":%d}]}`,
				[]string{"up-a", ""}[i%3%2], i, i%7, i%3),
			CreatedAt: day.Add(time.Duration(i) * 53 * time.Minute)}
		switch i % 5 {
		case 3:
			l.Type, l.Other = store.LogRefund, fmt.Appendf(nil, `{"upstream_cost_usd":"0.000%d","attempts":[{"key_index":%d}]}`, i, i%3)
		case 4:
			l.Other = []byte(`{"adjustment":true}`)
		}
		logs = append(logs, l)
	}
	return logs
}

// An upgrade from a database without the channel rollups: the rows there
// are wait in the range migration 220 takes and are folded once by the
// backfill, and a row a node of the earlier release writes afterwards
// carries the mark and is folded once by the catch-up; until then the
// rollups are not ready (the reports read rows).
func TestUpgradeFoldsTheRowsThereAreIntoTheChannelRollupsAndCatchesUpRowsWrittenWithoutThem(t *testing.T) {
	dsns := upgradeDatabases(t)
	if base := os.Getenv("TURNPIKE_TEST_MYSQL"); base != "" {
		dsns["mysql"] = testdb.MySQL(t, base)
	}
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	queries := []store.ChannelQuery{
		{Since: day, Until: day.Add(72 * time.Hour), Granularity: "day", Days: true},
		{Since: day.Add(5 * time.Hour), Until: day.Add(30 * time.Hour), Days: true},
		{Since: day.Add(24 * time.Hour), Until: day.Add(48 * time.Hour), ChannelID: 2, Granularity: "day", Days: true},
	}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openConcrete(t, dsn)
			logs := channelRows(day, 60)
			if err := s.Logs().Insert(ctx, logs[:50]); err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(queries))
			for i, q := range queries {
				want[i] = channelSums(t, s, q)
			}
			undo := []string{"DROP TABLE usage_channel_rollups", "DROP TABLE usage_channel_rollups_daily", "DROP INDEX usage_logs_channel_pending_idx",
				"ALTER TABLE usage_logs DROP COLUMN channel_pending", "ALTER TABLE usage_rollup_backfill DROP COLUMN channel_next_id",
				"ALTER TABLE usage_rollup_backfill DROP COLUMN channel_below_id", "DELETE FROM schema_migrations WHERE version = 220"}
			if s.dialect == MySQL {
				undo[2] = "DROP INDEX usage_logs_channel_pending_idx ON usage_logs"
			}
			undoMigration(t, s, undo)
			again := openConcrete(t, dsn)
			catchUp := func(what string) {
				t.Helper()
				if ready, err := again.Rollups().ChannelsReady(ctx); err != nil || ready {
					t.Fatalf("ready %v (%v) with %s not in the channel rollups", ready, err, what)
				}
				for more := true; more; {
					var err error
					if more, err = again.Rollups().Backfill(ctx, 7); err != nil {
						t.Fatal(err)
					}
				}
				if ready, err := again.Rollups().ChannelsReady(ctx); err != nil || !ready {
					t.Fatalf("not ready (%v) after the backfill of %s", err, what)
				}
			}
			catchUp("the rows of before the upgrade")
			for i, q := range queries {
				if got := channelSums(t, again, q); got != want[i] || len(got) < 50 {
					t.Fatalf("%+v after the upgrade\n got %s\nwant %s", q, got, want[i])
				}
			}
			// A node of the earlier release writes rows (naming the usage
			// rollups' mark, not this one) among the writer's own.
			old := "INSERT INTO usage_logs (type, user_id, token_id, channel_id, model, prompt_tokens, completion_tokens, quota, latency_ms, " +
				"request_id, other, created_at, team_id, org_id, rollup_pending) VALUES (?, 1, 0, ?, ?, ?, ?, ?, 0, '', ?, ?, 0, 0, NULL)"
			for _, l := range logs[50:55] {
				if _, err := again.DB().ExecContext(ctx, again.Rebind(old), l.Type, l.ChannelID, l.Model, l.PromptTokens, l.CompletionTokens,
					l.Quota, string(l.Other), dbTime(l.CreatedAt)); err != nil {
					t.Fatal(err)
				}
			}
			if err := again.Logs().Insert(ctx, logs[55:]); err != nil {
				t.Fatal(err)
			}
			catchUp("the rows of an earlier release's node")
			fresh := openConcrete(t, "sqlite:"+t.TempDir()+"/fresh.db")
			if err := fresh.Logs().Insert(ctx, logs); err != nil {
				t.Fatal(err)
			}
			for _, q := range queries {
				if got, want := channelSums(t, again, q), channelSums(t, fresh, q); got != want {
					t.Fatalf("%+v after the catch-up\n got %s\nwant %s (every row once)", q, got, want)
				}
			}
		})
	}
}
