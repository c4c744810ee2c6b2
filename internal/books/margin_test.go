package books

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestMarginSumsChargesAndUpstreamCostsPerGroup(t *testing.T) {
	e := newLedgerEnv(t)
	ctx := context.Background()
	ch := &store.Channel{Name: "cheap", Type: 1, Models: []string{}, Groups: []string{}, Status: store.StatusEnabled}
	must(t, e.st.Channels().Create(ctx, ch))
	now := time.Now().UTC()
	row := func(typ string, channel int64, model string, quota int64, other string) store.UsageLog {
		return store.UsageLog{Type: typ, UserID: e.user.ID, TokenID: e.key.ID, ChannelID: channel, Model: model, Quota: quota,
			Other: []byte(other), CreatedAt: now.Add(-time.Minute)}
	}
	must(t, e.st.Logs().Insert(ctx, []store.UsageLog{
		row(store.LogConsume, ch.ID, "gpt-x", 500_000, `{"upstream_cost_usd":"0.8"}`),
		row(store.LogConsume, ch.ID, "gpt-x", 250_000, `{"upstream_cost_usd":"0.1"}`),
		row(store.LogConsume, ch.ID, "video", 1_000_000, `{"upstream_cost_usd":"1.5","adjustment":false}`),
		row(store.LogConsume, ch.ID, "video", 100_000, `{"upstream_cost_usd":"0.15","adjustment":true}`),
		row(store.LogRefund, ch.ID, "video", 50_000, `{"upstream_cost_usd":"0.075","adjustment":true}`),
		row(store.LogConsume, 99, "gpt-x", 5_000, `{}`),
		row(store.LogError, ch.ID, "gpt-x", 0, `{"upstream_cost_usd":"9"}`),
		{Type: store.LogConsume, UserID: e.user.ID, ChannelID: ch.ID, Model: "gpt-x", Quota: 1, CreatedAt: now.Add(-48 * time.Hour)},
	}))
	w := store.Window{Since: now.Add(-time.Hour), Until: now}
	tests := []struct {
		by   string
		want []MarginItem
	}{
		{"channel", []MarginItem{
			{Key: "1", Name: "cheap", Requests: 3, ChargedQuota: 1_800_000, ChargedUSD: "3.6", UpstreamCostUSD: "2.475", MarginUSD: "1.125"},
			{Key: "99", Requests: 1, ChargedQuota: 5_000, ChargedUSD: "0.01", UpstreamCostUSD: "0", MarginUSD: "0.01"}}},
		{"model", []MarginItem{
			{Key: "video", Requests: 1, ChargedQuota: 1_050_000, ChargedUSD: "2.1", UpstreamCostUSD: "1.575", MarginUSD: "0.525"},
			{Key: "gpt-x", Requests: 3, ChargedQuota: 755_000, ChargedUSD: "1.51", UpstreamCostUSD: "0.9", MarginUSD: "0.61"}}},
		{"user", []MarginItem{
			{Key: "1", Name: "alice", Requests: 4, ChargedQuota: 1_805_000, ChargedUSD: "3.61", UpstreamCostUSD: "2.475", MarginUSD: "1.135"}}},
		{"token", []MarginItem{
			{Key: "1", Name: "limited", Requests: 4, ChargedQuota: 1_805_000, ChargedUSD: "3.61", UpstreamCostUSD: "2.475", MarginUSD: "1.135"}}},
	}
	for _, tt := range tests {
		t.Run(tt.by, func(t *testing.T) {
			got, err := Margin(ctx, e.st, w, tt.by, 500_000)
			must(t, err)
			if len(got) != len(tt.want) {
				t.Fatalf("items = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("item %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
	raw, err := json.Marshal(MarginItem{Key: "1", ChargedUSD: "3.6", UpstreamCostUSD: "2.475", MarginUSD: "1.125"})
	must(t, err)
	if want := `"charged_usd":3.6,"upstream_cost_usd":2.475,"margin_usd":1.125`; !strings.Contains(string(raw), want) {
		t.Errorf("item JSON %s, want the dollars as exact numbers %s", raw, want)
	}
	var bad ErrGrouping
	if _, err := Margin(ctx, e.st, w, "group", 500_000); !errors.As(err, &bad) {
		t.Fatalf("group_by=group: err = %v, want ErrGrouping", err)
	}
}

func TestParseWindowReadsRFC3339AndUnixSeconds(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, since, until string
		want               store.Window
		wantErr            bool
	}{
		{"defaults to the last day", "", "", store.Window{Since: now.Add(-24 * time.Hour), Until: now}, false},
		{"rfc 3339", "2026-04-30T00:00:00Z", "2026-04-30T06:00:00+02:00",
			store.Window{Since: time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 4, 30, 4, 0, 0, 0, time.UTC)}, false},
		{"unix seconds", "1777000000", "1777003600", store.Window{Since: time.Unix(1777000000, 0).UTC(), Until: time.Unix(1777003600, 0).UTC()}, false},
		{"until alone moves the default", "", "1777003600", store.Window{Since: time.Unix(1777003600, 0).UTC().Add(-24 * time.Hour), Until: time.Unix(1777003600, 0).UTC()}, false},
		{"a date without time", "2026-04-30", "", store.Window{}, true},
		{"since after until", "1777003600", "1777000000", store.Window{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWindow(tt.since, tt.until, now)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (!got.Since.Equal(tt.want.Since) || !got.Until.Equal(tt.want.Until)) {
				t.Fatalf("window = %v, want %v", got, tt.want)
			}
		})
	}
}
