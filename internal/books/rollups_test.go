package books

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// reportStores are a fresh store per dialect the environment offers (SQLite
// always; PostgreSQL and MySQL with TURNPIKE_TEST_POSTGRES and
// TURNPIKE_TEST_MYSQL), with the raw connection that reads usage_logs
// behind the store's back.
func reportStores(t *testing.T) map[string]func(t *testing.T) (store.Store, string, string) {
	open := func(t *testing.T, dsn, driver, raw string) (store.Store, string, string) {
		st, err := sqlstore.OpenStore(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st, driver, raw
	}
	out := map[string]func(t *testing.T) (store.Store, string, string){
		"sqlite": func(t *testing.T) (store.Store, string, string) {
			path := filepath.Join(t.TempDir(), "books.db")
			return open(t, "sqlite:"+path, "sqlite", path)
		},
	}
	if base := os.Getenv("TURNPIKE_TEST_POSTGRES"); base != "" {
		out["postgres"] = func(t *testing.T) (store.Store, string, string) {
			dsn := testdb.Postgres(t, base)
			return open(t, dsn, "pgx", dsn)
		}
	}
	if base := os.Getenv("TURNPIKE_TEST_MYSQL"); base != "" {
		out["mysql"] = func(t *testing.T) (store.Store, string, string) {
			dsn := testdb.MySQL(t, base)
			return open(t, dsn, "mysql", strings.TrimPrefix(dsn, "mysql://"))
		}
	}
	return out
}

// edgeRows are rows every 37 minutes over three UTC days and a bit, so
// that windows cut days, hours and minutes: two users in two teams, three
// models, refunds, errors, a task's correction row, cache reads and costs.
func edgeRows(start time.Time) []store.UsageLog {
	var logs []store.UsageLog
	for i := range 130 {
		l := store.UsageLog{Type: store.LogConsume, UserID: int64(1 + i%2), TokenID: int64(10 + i%3), ChannelID: int64(1 + i%2),
			Model: []string{"a", "b", "c"}[i%3], PromptTokens: 100 + i, CompletionTokens: 10 + i, Quota: int64(1000 + 7*i),
			TeamID:    int64(i % 2 * 4),
			Other:     []byte(fmt.Sprintf(`{"cache_read_tokens":%d,"upstream_cost_usd":"0.%012d"}`, i%50, 987654321+i)),
			CreatedAt: start.Add(time.Duration(i) * 37 * time.Minute)}
		switch i % 9 {
		case 2:
			l.Type, l.Other = store.LogRefund, []byte(`{"upstream_cost_usd":"0.000000000003"}`)
		case 5:
			l.Type, l.Quota = store.LogError, 0
		case 7:
			l.Other = []byte(`{"adjustment":true,"upstream_cost_usd":"0.25"}`)
		}
		logs = append(logs, l)
	}
	return logs
}

// foldByHand sums the rows of w per group and period the way the usage
// report must, without the rollups' code: refunds subtract, errors count,
// a correction row is no request.
func foldByHand(logs []store.UsageLog, w store.Window, by, gran string, f UsageFilter) map[string]string {
	type acc struct{ req, in, out, cache, quota, errs int64 }
	sums := map[string]*acc{}
	costs := map[string]*big.Rat{}
	for _, l := range logs {
		if l.CreatedAt.Before(w.Since) || !l.CreatedAt.Before(w.Until) || (f.UserID != 0 && l.UserID != f.UserID) || (f.TeamID != 0 && l.TeamID != f.TeamID) {
			continue
		}
		group := map[string]string{store.DimUser: fmt.Sprint(l.UserID), store.DimToken: fmt.Sprint(l.TokenID), store.DimModel: l.Model,
			store.DimChannel: fmt.Sprint(l.ChannelID), store.DimTeam: fmt.Sprint(l.TeamID)}[by]
		period := l.CreatedAt.UTC().Truncate(time.Hour)
		if gran == "day" {
			period = l.CreatedAt.UTC().Truncate(24 * time.Hour)
		}
		k := group + "@" + period.Format(time.RFC3339)
		a := sums[k]
		if a == nil {
			a, costs[k] = &acc{}, new(big.Rat)
			sums[k] = a
		}
		var o struct {
			Cache int64  `json:"cache_read_tokens"`
			Cost  string `json:"upstream_cost_usd"`
			Adj   bool   `json:"adjustment"`
		}
		_ = json.Unmarshal(l.Other, &o)
		c, ok := new(big.Rat).SetString(o.Cost)
		if !ok {
			c = new(big.Rat)
		}
		switch l.Type {
		case store.LogError:
			a.errs++
		case store.LogRefund:
			a.quota -= l.Quota
			costs[k].Sub(costs[k], c)
		default:
			if !o.Adj {
				a.req++
			}
			a.in, a.out, a.cache, a.quota = a.in+int64(l.PromptTokens), a.out+int64(l.CompletionTokens), a.cache+o.Cache, a.quota+l.Quota
			costs[k].Add(costs[k], c)
		}
	}
	out := map[string]string{}
	for k, a := range sums {
		out[k] = fmt.Sprintf("req %d in %d out %d cache %d quota %d errors %d cost %s", a.req, a.in, a.out, a.cache, a.quota, a.errs, number(costs[k]))
	}
	return out
}

func reportLines(items []UsageItem) map[string]string {
	out := map[string]string{}
	for _, it := range items {
		out[it.Key+"@"+it.Period.Format(time.RFC3339)] = fmt.Sprintf("req %d in %d out %d cache %d quota %d errors %d cost %s",
			it.Requests, it.InputTokens, it.OutputTokens, it.CacheReadTokens, it.Quota, it.Errors, it.UpstreamCostUSD)
	}
	return out
}

func TestUsageReportEqualsTheRowsAcrossDayAndHourEdges(t *testing.T) {
	start := time.Date(2026, 3, 9, 21, 12, 0, 0, time.UTC)
	day := func(d, h, m int) time.Time { return time.Date(2026, 3, 9+d, h, m, 0, 0, time.UTC) }
	plus5 := time.FixedZone("UTC+5", 5*3600)
	windows := []struct {
		name string
		w    store.Window
	}{
		{"everything, cut inside hours", store.Window{Since: start.Add(-3 * time.Minute), Until: day(4, 6, 1)}},
		{"two whole days", store.Window{Since: day(1, 0, 0), Until: day(3, 0, 0)}},
		{"mid-hour to mid-hour over two midnights", store.Window{Since: day(0, 22, 30), Until: day(2, 1, 15)}},
		{"whole hours around one midnight", store.Window{Since: day(1, 20, 0), Until: day(2, 4, 0)}},
		{"inside one hour", store.Window{Since: day(1, 5, 10), Until: day(1, 5, 50)}},
		{"one day but a minute", store.Window{Since: day(2, 0, 1), Until: day(3, 0, 0)}},
		{"a day less its first minutes, then whole days", store.Window{Since: day(1, 0, 17), Until: day(3, 0, 0)}},
		{"days cut late at the start and early at the end", store.Window{Since: day(1, 2, 20), Until: day(3, 19, 40)}},
		{"most of one day, cut at both ends", store.Window{Since: day(2, 3, 5), Until: day(2, 22, 30)}},
		{"given in UTC+5, a UTC day and a half", store.Window{Since: time.Date(2026, 3, 11, 5, 0, 0, 0, plus5), Until: time.Date(2026, 3, 12, 17, 0, 0, 0, plus5)}},
	}
	filters := []UsageFilter{{}, {UserID: 2}, {TeamID: 4}}
	for name, open := range reportStores(t) {
		t.Run(name, func(t *testing.T) {
			st, driver, dsn := open(t)
			logs := edgeRows(start)
			ctx := context.Background()
			must(t, st.Logs().Insert(ctx, logs[:40]))
			must(t, st.Logs().Insert(ctx, logs[40:]))
			// Sums taken by the database itself over usage_logs (the
			// store's own reads are not the reference).
			raw := testdb.Open(t, driver, dsn)
			rows, err := raw.Query(`SELECT model, SUM(CASE WHEN type = 'consume' THEN quota WHEN type = 'refund' THEN -quota ELSE 0 END),
				SUM(CASE WHEN type = 'error' THEN 1 ELSE 0 END), SUM(CASE WHEN type = 'consume' THEN prompt_tokens ELSE 0 END)
				FROM usage_logs GROUP BY model ORDER BY model`)
			must(t, err)
			bySQL := map[string]string{}
			for rows.Next() {
				var model string
				var quota, errs, in int64
				must(t, rows.Scan(&model, &quota, &errs, &in))
				bySQL[model] = fmt.Sprintf("quota %d errors %d input %d", quota, errs, in)
			}
			must(t, rows.Err())
			rows.Close()
			totalsAgreeWithSQL(t, st, bySQL, windows[0].w)
			for _, win := range windows {
				for _, by := range UsageGroupings {
					for _, gran := range []string{"hour", "day"} {
						for _, f := range filters {
							items, err := FilteredUsageReport(ctx, st, win.w, by, gran, f)
							must(t, err)
							got, want := reportLines(items), foldByHand(logs, win.w, by, gran, f)
							if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
								t.Fatalf("%s by %s per %s %+v:\n got %v\nwant %v", win.name, by, gran, f, sorted(got), sorted(want))
							}
						}
					}
				}
			}
		})
	}
}

func sorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+" "+v)
	}
	sort.Strings(out)
	return out
}

// totalsAgreeWithSQL compares the usage and margin reports over w, which
// holds every row, with want: sums PostgreSQL, MySQL or SQLite took over
// usage_logs itself, per model.
func totalsAgreeWithSQL(t *testing.T, st store.Store, want map[string]string, w store.Window) {
	t.Helper()
	items, err := UsageReport(context.Background(), st, w, store.DimModel, "day")
	must(t, err)
	got := map[string]string{}
	acc := map[string][3]int64{}
	for _, it := range items {
		a := acc[it.Key]
		acc[it.Key] = [3]int64{a[0] + it.Quota, a[1] + it.Errors, a[2] + it.InputTokens}
	}
	for k, a := range acc {
		got[k] = fmt.Sprintf("quota %d errors %d input %d", a[0], a[1], a[2])
	}
	if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) || len(want) != 3 {
		t.Fatalf("usage report by model\n got %v\nSQL %v", sorted(got), sorted(want))
	}
	margin, err := Margin(context.Background(), st, w, "model", 500_000)
	must(t, err)
	for _, m := range margin {
		var quota int64
		fmt.Sscanf(want[m.Key], "quota %d", &quota)
		if m.ChargedQuota != quota {
			t.Fatalf("margin of %s charged %d, SQL says %d", m.Key, m.ChargedQuota, quota)
		}
	}
}
