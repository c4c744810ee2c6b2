package books

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// insertAsOldNode writes rows the way a node of a release before the
// rollups does during a rolling upgrade: a plain INSERT of the row's
// columns, no rollups.
func insertAsOldNode(t *testing.T, driver, raw string, logs []store.UsageLog) {
	t.Helper()
	if driver == "sqlite" {
		raw += "?_pragma=busy_timeout(5000)&_time_format=sqlite"
	}
	db := testdb.Open(t, driver, raw)
	q := "INSERT INTO usage_logs (type, user_id, token_id, channel_id, model, prompt_tokens, completion_tokens, quota, latency_ms, request_id, other, created_at, team_id, org_id) " +
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	if driver == "pgx" {
		for i := 14; i >= 1; i-- {
			q = strings.Replace(q, "?", fmt.Sprintf("$%d", 15-i), 1)
		}
	}
	for _, l := range logs {
		_, err := db.Exec(q, l.Type, l.UserID, l.TokenID, l.ChannelID, l.Model, l.PromptTokens, l.CompletionTokens, l.Quota, 0, "",
			string(l.Other), l.CreatedAt.UTC(), l.TeamID, l.OrgID)
		must(t, err)
	}
}

// storeDSN is the DSN a second node opens the database of reportStores with.
func storeDSN(driver, raw string) string {
	switch driver {
	case "sqlite":
		return "sqlite:" + raw
	case "mysql":
		return "mysql://" + raw
	}
	return raw
}

func TestRowsOfANodeWithoutRollupsReachThemOnceWhileTwoNodesCatchUp(t *testing.T) {
	start := time.Date(2026, 3, 9, 21, 12, 0, 0, time.UTC)
	logs := edgeRows(start)
	for name, open := range reportStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, driver, raw := open(t)
			must(t, st.Logs().Insert(ctx, logs[:50]))
			insertAsOldNode(t, driver, raw, logs[50:110])
			must(t, st.Logs().Insert(ctx, logs[110:]))
			if ready, err := st.Rollups().Ready(ctx); err != nil || ready {
				t.Fatalf("ready %v (%v) with 60 rows not in the rollups", ready, err)
			}
			other, err := sqlstore.OpenStore(ctx, storeDSN(driver, raw))
			must(t, err)
			defer other.Close()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, node := range []store.Store{st, other} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for more := true; more && errs[i] == nil; {
						more, errs[i] = node.Rollups().Backfill(ctx, 7)
					}
				}()
			}
			wg.Wait()
			must(t, errs[0])
			must(t, errs[1])
			if ready, err := st.Rollups().Ready(ctx); err != nil || !ready {
				t.Fatalf("not ready (%v) after both nodes caught up", err)
			}
			w := store.Window{Since: start.Add(-time.Hour), Until: start.Add(96 * time.Hour)}
			for _, by := range UsageGroupings {
				items, err := UsageReport(ctx, st, w, by, "day")
				must(t, err)
				if got, want := reportLines(items), foldByHand(logs, w, by, "day", UsageFilter{}); fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
					t.Fatalf("by %s after the catch-up:\n got %v\nwant %v", by, sorted(got), sorted(want))
				}
			}
			// The gateway's own rows carry no mark: they stay ready.
			must(t, st.Logs().Insert(ctx, logs[:1]))
			if ready, err := other.Rollups().Ready(ctx); err != nil || !ready {
				t.Fatalf("a row of the billing writer left the rollups not ready (%v)", err)
			}
		})
	}
}
