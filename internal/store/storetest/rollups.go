package storetest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// rollupRows are rows over three hours, two users, two models, with
// refunds, errors, cache reads, costs and a task's correction row.
func rollupRows(at time.Time) []store.UsageLog {
	var logs []store.UsageLog
	for i := range 30 {
		l := store.UsageLog{Type: store.LogConsume, UserID: int64(1 + i%2), TokenID: int64(10 + i%2), ChannelID: 5,
			Model: []string{"a", "b"}[i%3%2], PromptTokens: 100 + i, CompletionTokens: 10 + i, Quota: int64(1000 + i),
			TeamID:    int64(i % 2 * 7),
			Other:     []byte(fmt.Sprintf(`{"cache_read_tokens":%d,"upstream_cost_usd":"0.%012d"}`, i, 123456789+i)),
			CreatedAt: at.Add(time.Duration(i) * 6 * time.Minute)}
		switch i % 10 {
		case 3:
			l.Type = store.LogRefund
			l.Other = []byte(`{"upstream_cost_usd":"0.000000000001"}`)
		case 4:
			l.Type, l.Quota = store.LogError, 0
		case 5:
			l.Other = []byte(`{"adjustment":true}`)
		}
		logs = append(logs, l)
	}
	return logs
}

// wantRollups folds rows the way the rollups must: by hand, per model.
func wantRollups(logs []store.UsageLog) map[string]store.RollupSums {
	out := map[string]store.RollupSums{}
	for _, l := range logs {
		_, v := store.RollupOf(l)
		s := out[l.Model+"/"+l.Type]
		s.Add(v)
		out[l.Model+"/"+l.Type] = s
	}
	return out
}

func gotRollups(t *testing.T, s store.Store, at time.Time, by string) map[string]store.RollupSums {
	t.Helper()
	lines, err := s.Rollups().Sum(ctx(t), store.RollupQuery{Since: at, Until: at.Add(4 * time.Hour), GroupBy: by})
	must(t, err, "sum")
	out := map[string]store.RollupSums{}
	for _, l := range lines {
		v := l.RollupSums
		v.UpstreamCostPico = l.UpstreamCost.Int64()
		s := out[l.Group+"/"+l.Type]
		s.Add(v)
		out[l.Group+"/"+l.Type] = s
	}
	return out
}

var rollupTests = []namedTest{
	{"the billing writer keeps the hourly rollups exact", func(t *testing.T, s store.Store) {
		at := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
		logs := rollupRows(at)
		must(t, s.Logs().Insert(ctx(t), logs[:11]), "insert")
		must(t, s.Logs().Insert(ctx(t), logs[11:]), "insert")
		want := wantRollups(logs)
		if got := gotRollups(t, s, at, store.DimModel); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("rollups by model\n got %v\nwant %v", got, want)
		}
		ready, err := s.Rollups().Ready(ctx(t))
		must(t, err, "ready")
		if !ready {
			t.Fatal("a new database's rollups are not ready")
		}
		lines, err := s.Rollups().Sum(ctx(t), store.RollupQuery{Since: at, Until: at.Add(4 * time.Hour), GroupBy: store.DimTeam, Granularity: "hour"})
		must(t, err, "sum by team and hour")
		teams, hours := map[string]bool{}, map[int64]bool{}
		for _, l := range lines {
			teams[l.Group] = true
			hours[l.Period.Unix()] = true
		}
		if len(teams) != 2 || !teams["7"] || len(hours) != 3 {
			t.Fatalf("teams %v hours %v", teams, hours)
		}
	}},
	{"the daily rollups are the hourly ones summed per UTC day", func(t *testing.T, s store.Store) {
		at := time.Date(2026, 4, 2, 22, 0, 0, 0, time.UTC) // three hours over a midnight
		logs := rollupRows(at)
		must(t, s.Logs().Insert(ctx(t), logs[:13]), "insert")
		must(t, s.Logs().Insert(ctx(t), logs[13:]), "insert")
		days := store.Window{Since: at.Truncate(24 * time.Hour), Until: at.Truncate(24 * time.Hour).Add(48 * time.Hour)}
		sum := func(q store.RollupQuery) string {
			q.Since, q.Until, q.GroupBy, q.Granularity = days.Since, days.Until, store.DimUser, "day"
			lines, err := s.Rollups().Sum(ctx(t), q)
			must(t, err, "sum")
			out := make([]string, 0, len(lines))
			for _, l := range lines {
				out = append(out, fmt.Sprintf("%s/%s/%s %v %v", l.Group, l.Period.Format(time.DateOnly), l.Type, l.RollupSums, l.UpstreamCost))
			}
			sort.Strings(out)
			return fmt.Sprint(out)
		}
		hourly, daily := sum(store.RollupQuery{}), sum(store.RollupQuery{Days: true})
		if hourly != daily || !strings.Contains(daily, "2026-04-03") {
			t.Fatalf("daily\n%s\nhourly\n%s", daily, hourly)
		}
		if got, want := sum(store.RollupQuery{Days: true, UserID: 2, TeamID: 7}), sum(store.RollupQuery{UserID: 2, TeamID: 7}); got != want || strings.Contains(got, "1/") || !strings.Contains(got, "2/") {
			t.Fatalf("user 2 of team 7: daily %s hourly %s", got, want)
		}
		if _, err := s.Rollups().Sum(ctx(t), store.RollupQuery{Since: days.Since, Until: days.Until, Days: true, Granularity: "hour"}); err == nil {
			t.Fatal("the daily layer answered per hour")
		}
		must(t, s.Rollups().Restart(ctx(t)), "restart")
		for more := true; more; {
			var err error
			more, err = s.Rollups().Backfill(ctx(t), 5)
			must(t, err, "backfill")
		}
		if again := sum(store.RollupQuery{Days: true}); again != daily {
			t.Fatalf("daily rollups rebuilt by the backfill\n%s\nkept\n%s", again, daily)
		}
	}},
	{"rollups rebuilt from the rows equal the ones kept", func(t *testing.T, s store.Store) {
		at := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
		logs := rollupRows(at)
		must(t, s.Logs().Insert(ctx(t), logs), "insert")
		kept := gotRollups(t, s, at, store.DimUser)
		must(t, s.Rollups().Restart(ctx(t)), "restart")
		if ready, _ := s.Rollups().Ready(ctx(t)); ready {
			t.Fatal("ready right after a restart")
		}
		for i := 0; ; i++ {
			more, err := s.Rollups().Backfill(ctx(t), 7)
			must(t, err, "backfill")
			if !more {
				break
			}
			if i > 10 {
				t.Fatal("the backfill does not end")
			}
		}
		if ready, _ := s.Rollups().Ready(ctx(t)); !ready {
			t.Fatal("not ready after the backfill")
		}
		if got := gotRollups(t, s, at, store.DimUser); fmt.Sprint(got) != fmt.Sprint(kept) {
			t.Fatalf("rebuilt\n got %v\nwant %v", got, kept)
		}
	}},
	{"a page of the log carries its cursor and a capped count", func(t *testing.T, s store.Store) {
		at := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
		must(t, s.Logs().Insert(ctx(t), rollupRows(at)), "insert")
		first, err := s.Logs().Page(ctx(t), store.LogFilter{UserID: 1}, store.Page{Page: 1, PageSize: 4})
		must(t, err, "page")
		if len(first.Items) != 4 || first.Total != 15 || !first.TotalExact || first.NextCursor != first.Items[3].ID {
			t.Fatalf("first page: %d items, total %d exact %v cursor %d", len(first.Items), first.Total, first.TotalExact, first.NextCursor)
		}
		seen := len(first.Items)
		for cur := first.NextCursor; cur != 0; {
			pg, err := s.Logs().Page(ctx(t), store.LogFilter{UserID: 1, BeforeID: cur}, store.Page{Page: 1, PageSize: 4})
			must(t, err, "next page")
			for _, l := range pg.Items {
				if l.ID >= cur || l.UserID != 1 {
					t.Fatalf("row %d after cursor %d", l.ID, cur)
				}
			}
			seen += len(pg.Items)
			cur = pg.NextCursor
		}
		if seen != 15 {
			t.Fatalf("the cursor pages read %d rows, want 15", seen)
		}
	}},
}
