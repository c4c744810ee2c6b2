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

func TestParseProviderCSVRefusesWhatItCannotRead(t *testing.T) {
	tests := []struct {
		name, body, wantMsg string
	}{
		{"empty", "", "empty"},
		{"a column missing", "date,model,requests,input_tokens,output_tokens\n2026-01-01,m,1,2,3\n", `"cost_usd"`},
		{"no rows", strings.Join(ProviderHeader, ",") + "\n", "no rows"},
		{"a bad day", "date,model,requests,input_tokens,output_tokens,cost_usd\n01/02/2026,m,1,2,3,0.1\n", "line 2: date"},
		{"a negative count", "date,model,requests,input_tokens,output_tokens,cost_usd\n2026-01-01,m,-1,2,3,0.1\n", "line 2: requests"},
		{"a bad cost", "date,model,requests,input_tokens,output_tokens,cost_usd\n2026-01-01,m,1,2,3,abc\n", "line 2: cost_usd"},
		{"a short line", "date,model,requests,input_tokens,output_tokens,cost_usd\n2026-01-01,m,1\n", "line 2"},
		{"a repeated day and model", "date,model,requests,input_tokens,output_tokens,cost_usd\n2026-01-01,m,1,2,3,1\n2026-01-01,m,1,2,3,1\n", "line 3: 2026-01-01 m appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProviderCSV(strings.NewReader(tt.body))
			var ce *CSVError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want a CSVError saying %q", err, tt.wantMsg)
			}
		})
	}
}

func TestCompareProviderSetsOursBesideTheirsPerDayAndModel(t *testing.T) {
	e := newLedgerEnv(t)
	ctx := context.Background()
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	row := func(at time.Time, channel int64, model, upstream string, in, out int, cost string) store.UsageLog {
		other := `{"upstream_model":"` + upstream + `"`
		if cost != "" {
			other += `,"upstream_cost_usd":"` + cost + `"`
		}
		return store.UsageLog{Type: store.LogConsume, UserID: e.user.ID, ChannelID: channel, Model: model, PromptTokens: in,
			CompletionTokens: out, Quota: 1, Other: []byte(other + "}"), CreatedAt: at}
	}
	must(t, e.st.Logs().Insert(ctx, []store.UsageLog{
		row(day, 7, "gpt-x", "gpt-x-2025", 1000, 100, "1.00"),
		row(day.Add(time.Hour), 7, "gpt-x", "gpt-x-2025", 1000, 100, "1.00"),
		row(day, 8, "gpt-x", "gpt-x-2025", 5000, 500, "9"), // another channel
		row(day.Add(24*time.Hour), 7, "gpt-x", "gpt-x-2025", 2000, 0, "0.5"),
		row(day, 7, "old", "old", 300, 0, ""), // a row from before upstream costs
		row(day, 7, "extra", "extra", 10, 0, "0.01"),
		row(day.Add(72*time.Hour), 7, "gpt-x", "gpt-x-2025", 1, 1, "5"), // after the export
	}))
	theirs, err := ParseProviderCSV(strings.NewReader("date,model,requests,input_tokens,output_tokens,cost_usd\n" +
		"2026-03-01,gpt-x-2025,2,2000,200,2.01\n" + // 0.5 % apart: not flagged
		"2026-03-02,gpt-x,1,2000,0,0.6\n" + // the gateway's name, 16.67 % below
		"2026-03-01,old,1,330,0,\n" + // no cost on either side: tokens, 9.09 % below
		"2026-03-02,missing,3,10,10,1\n"))
	must(t, err)
	rep, err := CompareProvider(ctx, e.st, 7, theirs)
	must(t, err)
	type want struct {
		date, model, compared string
		pct                   float64
		flag                  bool
		oursCost              string
	}
	wants := []want{
		{"2026-03-01", "extra", "tokens", 100, true, "0.01"},
		{"2026-03-01", "gpt-x-2025", "cost_usd", -0.5, false, "2"},
		{"2026-03-01", "old", "tokens", -9.09, true, ""},
		{"2026-03-02", "gpt-x", "cost_usd", -16.67, true, "0.5"},
		{"2026-03-02", "missing", "tokens", -100, true, ""},
	}
	if len(rep.Items) != len(wants) || rep.Flagged != 4 || rep.Since != "2026-03-01" || rep.Until != "2026-03-02" {
		t.Fatalf("report = %+v", rep)
	}
	for i, w := range wants {
		got := rep.Items[i]
		if got.Date != w.date || got.Model != w.model || got.Compared != w.compared || got.DifferencePct != w.pct ||
			got.Flag != w.flag || costText(got.Ours.CostUSD) != w.oursCost {
			t.Errorf("line %d = %+v, want %+v", i, got, w)
		}
	}
	if got := rep.Items[1].Ours; got.Requests != 2 || got.InputTokens != 2000 || got.OutputTokens != 200 {
		t.Errorf("ours on day one = %+v, want 2 requests of 2000 and 200 tokens", got)
	}
}

// costText is a side's cost as written, or "" where it has none.
func costText(n *json.Number) string {
	if n == nil {
		return ""
	}
	return n.String()
}
