package books

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// keyedRows are edgeRows served by two channels' keys: the last attempt
// names the key, some rows name an upstream model, some no channel.
func keyedRows(start time.Time) []store.UsageLog {
	logs := edgeRows(start)
	for i := range logs {
		var o map[string]any
		if err := json.Unmarshal(logs[i].Other, &o); err != nil {
			panic(err)
		}
		o["attempts"] = []map[string]int{{"key_index": 5}, {"key_index": i % 4}}
		if i%6 == 1 {
			o["upstream_model"] = "up-" + logs[i].Model
		}
		logs[i].Other, _ = json.Marshal(o)
		if i%11 == 3 {
			logs[i].ChannelID = 0 // a task plugin's own answer
		}
	}
	return logs
}

// cacheByHand sums the consume rows of w per channel key as the cache
// report must, without the rollups' code.
func cacheByHand(logs []store.UsageLog, w store.Window) map[string]string {
	type acc struct{ req, in, cache int64 }
	sums := map[string]*acc{}
	for _, l := range logs {
		if l.Type != store.LogConsume || l.ChannelID == 0 || l.CreatedAt.Before(w.Since) || !l.CreatedAt.Before(w.Until) {
			continue
		}
		var o struct {
			Cache    int64 `json:"cache_read_tokens"`
			Adj      bool  `json:"adjustment"`
			Attempts []struct {
				KeyIndex int `json:"key_index"`
			} `json:"attempts"`
		}
		_ = json.Unmarshal(l.Other, &o)
		k := fmt.Sprintf("#%d#%d", l.ChannelID, o.Attempts[len(o.Attempts)-1].KeyIndex)
		a := sums[k]
		if a == nil {
			a = &acc{}
			sums[k] = a
		}
		if !o.Adj {
			a.req++
		}
		a.in, a.cache = a.in+int64(l.PromptTokens), a.cache+o.Cache
	}
	out := map[string]string{}
	for k, a := range sums {
		out[k] = fmt.Sprintf("req %d in %d cache %d", a.req, a.in, a.cache)
	}
	return out
}

func TestTheCacheReportByKeyEqualsTheRowsAcrossDayAndHourEdges(t *testing.T) {
	start := time.Date(2026, 3, 9, 21, 12, 0, 0, time.UTC)
	day := func(d, h, m int) time.Time { return time.Date(2026, 3, 9+d, h, m, 0, 0, time.UTC) }
	windows := []store.Window{
		{Since: start.Add(-3 * time.Minute), Until: day(4, 6, 1)},
		{Since: day(1, 0, 0), Until: day(3, 0, 0)},
		{Since: day(0, 22, 30), Until: day(2, 1, 15)},
		{Since: day(1, 5, 10), Until: day(1, 5, 50)},
		{Since: day(1, 0, 17), Until: day(3, 0, 0)},
		{Since: day(2, 3, 5), Until: day(2, 22, 30)},
		{Since: day(1, 2, 20), Until: day(3, 19, 40)},
	}
	logs := keyedRows(start)
	for name, open := range reportStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, driver, raw := open(t)
			must(t, st.Logs().Insert(ctx, logs[:70]))
			check := func(how string) {
				t.Helper()
				for _, w := range windows {
					items, err := Cache(ctx, st, w, "key")
					must(t, err)
					got := map[string]string{}
					for _, it := range items {
						got[it.Key] = fmt.Sprintf("req %d in %d cache %d", it.Requests, it.Input, it.CacheRead)
					}
					if want := cacheByHand(logs, w); fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) || len(want) == 0 {
						t.Fatalf("%s, %v:\n got %v\nwant %v", how, w, sorted(got), sorted(want))
					}
				}
			}
			// Rows of a node without the channel rollups: read from the rows
			// until the catch-up has folded them, from the rollups after.
			insertAsOldNode(t, driver, raw, logs[70:])
			if ready, err := st.Rollups().ChannelsReady(ctx); err != nil || ready {
				t.Fatalf("channel rollups ready %v (%v) with rows not in them", ready, err)
			}
			check("from the rows")
			for more := true; more; {
				var err error
				more, err = st.Rollups().Backfill(ctx, 50)
				must(t, err)
			}
			if ready, err := st.Rollups().ChannelsReady(ctx); err != nil || !ready {
				t.Fatalf("channel rollups not ready (%v) after the catch-up", err)
			}
			check("from the rollups")
		})
	}
}

// The provider comparison reads the channel's daily rollups once they hold
// every row, and answers what it answered from the rows.
func TestTheProviderComparisonAnswersFromTheRollupsWhatTheRowsSay(t *testing.T) {
	start := time.Date(2026, 3, 9, 21, 12, 0, 0, time.UTC)
	logs := keyedRows(start)
	for i := range logs {
		if i%13 == 5 { // a row from before upstream costs
			logs[i].Other = []byte(strings.ReplaceAll(string(logs[i].Other), "upstream_cost_usd", "was"))
		}
	}
	theirs, err := ParseProviderCSV(strings.NewReader("date,model,requests,input_tokens,output_tokens,cost_usd\n" +
		"2026-03-10,a,10,2000,200,2.01\n2026-03-10,up-b,1,10,0,\n2026-03-11,c,4,500,60,0.3\n2026-03-12,nothing,1,1,1,1\n"))
	must(t, err)
	for name, open := range reportStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, driver, raw := open(t)
			insertAsOldNode(t, driver, raw, logs)
			fromRows := map[int64]string{}
			for _, ch := range []int64{1, 2} {
				rep, err := CompareProvider(ctx, st, ch, theirs)
				must(t, err)
				out, _ := json.Marshal(rep)
				fromRows[ch] = string(out)
			}
			for more := true; more; {
				more, err = st.Rollups().Backfill(ctx, 50)
				must(t, err)
			}
			for _, ch := range []int64{1, 2} {
				rep, err := CompareProvider(ctx, st, ch, theirs)
				must(t, err)
				out, _ := json.Marshal(rep)
				if string(out) != fromRows[ch] || len(rep.Items) < 6 {
					t.Fatalf("channel %d from the rollups\n %s\nfrom the rows\n %s", ch, out, fromRows[ch])
				}
			}
		})
	}
}
