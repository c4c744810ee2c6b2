package books

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestATeamsUsageIsSummedByUserKeyAndModelOverItsWindow(t *testing.T) {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	logs := []store.UsageLog{
		{Type: store.LogConsume, UserID: 1, TokenID: 11, Model: "a", Quota: 10, PromptTokens: 1, TeamID: 5, OrgID: 2, CreatedAt: base.Add(20 * time.Minute)},
		{Type: store.LogConsume, UserID: 1, TokenID: 12, Model: "b", Quota: 20, CompletionTokens: 3, TeamID: 5, OrgID: 2, CreatedAt: base.Add(time.Hour)},
		{Type: store.LogConsume, UserID: 2, TokenID: 21, Model: "a", Quota: 40, TeamID: 5, OrgID: 2, CreatedAt: base.Add(14 * time.Hour)},
		{Type: store.LogError, UserID: 2, TokenID: 21, Model: "a", Quota: 0, TeamID: 5, OrgID: 2, CreatedAt: base.Add(2 * time.Hour)},
		{Type: store.LogConsume, UserID: 3, TokenID: 31, Model: "a", Quota: 80, TeamID: 6, OrgID: 2, CreatedAt: base.Add(time.Hour)},
		{Type: store.LogConsume, UserID: 1, TokenID: 11, Model: "a", Quota: 160, TeamID: 5, OrgID: 2, CreatedAt: base.Add(48 * time.Hour)},
		{Type: store.LogConsume, UserID: 1, TokenID: 11, Model: "a", Quota: 320, TeamID: 5, OrgID: 2, CreatedAt: base.Add(5 * time.Minute)},
		{Type: store.LogConsume, UserID: 1, TokenID: 11, Model: "a", Quota: 640, TeamID: 5, OrgID: 2, CreatedAt: base.Add(24*time.Hour + 15*time.Minute)},
		{Type: store.LogConsume, UserID: 1, TokenID: 11, Model: "a", Quota: 1, Other: []byte(`{"adjustment":true}`), TeamID: 5, OrgID: 2, CreatedAt: base.Add(24*time.Hour + 5*time.Minute)},
	}
	// From 00:10 to 00:10 a day later: a raw edge at each end, the day's
	// bucket less its first hour in between.
	w := store.Window{Since: base.Add(10 * time.Minute), Until: base.Add(24*time.Hour + 10*time.Minute)}
	for name, open := range reportStores(t) {
		t.Run(name, func(t *testing.T) {
			st, _, _ := open(t)
			must(t, st.Logs().Insert(context.Background(), logs))
			for _, c := range []struct {
				by   string
				want []store.UsageGroup
			}{
				{"user", []store.UsageGroup{{Key: "1", Requests: 2, PromptTokens: 1, CompletionTokens: 3, Quota: 31}, {Key: "2", Requests: 1, Quota: 40}}},
				{"key", []store.UsageGroup{{Key: "11", Requests: 1, PromptTokens: 1, Quota: 11}, {Key: "12", Requests: 1, CompletionTokens: 3, Quota: 20},
					{Key: "21", Requests: 1, Quota: 40}}},
				{"model", []store.UsageGroup{{Key: "a", Requests: 2, PromptTokens: 1, Quota: 51}, {Key: "b", Requests: 1, CompletionTokens: 3, Quota: 20}}},
			} {
				got, err := TeamUsage(context.Background(), st, 5, w, c.by)
				must(t, err)
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("by %s: %+v, want %+v", c.by, got, c.want)
				}
			}
		})
	}
}
