package books

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// cutDayReports are every report that reads a cut day as the day's bucket
// less its hours outside the window, each answering the keys of its lines
// (with the period where it has one).
var cutDayReports = map[string]func(ctx context.Context, st store.Store, w store.Window) ([]string, error){
	"usage by model per day": usageKeys(store.DimModel, "day", UsageFilter{}),
	"usage by user per day":  usageKeys(store.DimUser, "day", UsageFilter{}),
	"usage by key per day":   usageKeys(store.DimToken, "day", UsageFilter{}),
	"usage by team per day":  usageKeys(store.DimTeam, "day", UsageFilter{}),
	"dashboard of user 1":    usageKeys(store.DimModel, "day", UsageFilter{UserID: 1}),
	"dashboard of user 2":    usageKeys(store.DimModel, "day", UsageFilter{UserID: 2}),
	"margin by channel": func(ctx context.Context, st store.Store, w store.Window) ([]string, error) {
		items, err := Margin(ctx, st, w, "channel", 500_000)
		keys := make([]string, len(items))
		for i, it := range items {
			keys[i] = it.Key
		}
		return keys, err
	},
	"cache by model": cacheKeys("model"),
	"cache by key":   cacheKeys("key"),
	"team 4 by user": func(ctx context.Context, st store.Store, w store.Window) ([]string, error) {
		groups, err := TeamUsage(ctx, st, 4, w, "user")
		keys := make([]string, len(groups))
		for i, g := range groups {
			keys[i] = g.Key
		}
		return keys, err
	},
}

func usageKeys(by, gran string, f UsageFilter) func(context.Context, store.Store, store.Window) ([]string, error) {
	return func(ctx context.Context, st store.Store, w store.Window) ([]string, error) {
		items, err := FilteredUsageReport(ctx, st, w, by, gran, f)
		keys := make([]string, len(items))
		for i, it := range items {
			keys[i] = it.Key + "@" + it.Period.Format(time.DateOnly)
		}
		return keys, err
	}
}

func cacheKeys(by string) func(context.Context, store.Store, store.Window) ([]string, error) {
	return func(ctx context.Context, st store.Store, w store.Window) ([]string, error) {
		items, err := Cache(ctx, st, w, by)
		keys := make([]string, len(items))
		for i, it := range items {
			keys[i] = it.Key
		}
		return keys, err
	}
}

// A window that covers most of a day is read as the day's buckets less its
// hours outside the window; a group whose calls are all in those hours nets
// to nothing there and must have no line, whatever the time of day the
// test runs at (the window is fixed, not taken from the clock).
func TestAReportOfACutDayLeavesOutTheGroupsWhoseCallsAreAllOutsideTheWindow(t *testing.T) {
	day := time.Date(2026, 4, 14, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	// User 1's calls are before 03:00 and after 23:00, user 2's at noon;
	// the two share no user, key, model, channel or team.
	outside := []store.UsageLog{
		{Type: store.LogConsume, UserID: 1, TokenID: 10, ChannelID: 1, Model: "a", TeamID: 4, PromptTokens: 100, Quota: 30,
			Other: []byte(`{"cache_read_tokens":40,"upstream_cost_usd":"0.001"}`), CreatedAt: at(1, 5)},
		{Type: store.LogRefund, UserID: 1, TokenID: 10, ChannelID: 1, Model: "a", TeamID: 4, Quota: 5, CreatedAt: at(2, 30)},
		{Type: store.LogError, UserID: 1, TokenID: 10, ChannelID: 1, Model: "a", TeamID: 4, CreatedAt: at(23, 40)},
	}
	inside := store.UsageLog{Type: store.LogConsume, UserID: 2, TokenID: 20, ChannelID: 2, Model: "b", TeamID: 0, PromptTokens: 50,
		Quota: 70, Other: []byte(`{"cache_read_tokens":10}`), CreatedAt: at(12, 0)}
	cases := []struct {
		name string
		w    store.Window
		rows []store.UsageLog
		want map[string][]string // by report; absent: no line
	}{
		{"a day cut at both ends, no call inside", store.Window{Since: at(3, 20), Until: at(23, 10)}, outside, nil},
		{"a day cut at its start, then a whole day, no call inside", store.Window{Since: at(3, 20), Until: at(48, 0)}, outside[:2], nil},
		{"a day cut at both ends, one group's call inside", store.Window{Since: at(3, 20), Until: at(23, 10)}, append(outside[:3:3], inside),
			map[string][]string{
				"usage by model per day": {"b@2026-04-14"}, "usage by user per day": {"2@2026-04-14"},
				"usage by key per day": {"20@2026-04-14"}, "usage by team per day": {"0@2026-04-14"},
				"dashboard of user 2": {"b@2026-04-14"}, "margin by channel": {"2"}, "cache by model": {"b"}, "cache by key": {"#2#0"},
			}},
	}
	for name, open := range reportStores(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					st, _, _ := open(t)
					ctx := context.Background()
					must(t, st.Logs().Insert(ctx, c.rows))
					for report, read := range cutDayReports {
						got, err := read(ctx, st, c.w)
						must(t, err)
						sort.Strings(got)
						if fmt.Sprint(got) != fmt.Sprint(c.want[report]) {
							t.Errorf("%s: lines %v, want %v", report, got, c.want[report])
						}
					}
				})
			}
		})
	}
}
