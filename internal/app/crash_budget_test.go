package app_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// crashBudget is a period budget so large that no call of the crash load
// is refused by it: it is there to be counted, not to refuse.
const crashBudget = 1_000_000_000_000

// withBudgets gives every seeded user and key of the crash config a
// monthly budget, so that the period counters are kept (in Redis, when the
// gateway has one) through the kill.
func withBudgets(t *testing.T, cfgPath string) {
	t.Helper()
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(quota: -?\d+)\}`).ReplaceAll(b, []byte(fmt.Sprintf("${1}, period_quota: %d, period: month}", crashBudget)))
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// periodUsed is what the admin API says a user or key spent in its period.
func periodUsed(t *testing.T, url, path string) int64 {
	t.Helper()
	var v struct {
		PeriodQuota int64 `json:"period_quota"`
		Used        int64 `json:"period_used_quota"`
	}
	adminGet(t, url, path, &v)
	if v.PeriodQuota != crashBudget {
		t.Fatalf("GET %s: period_quota %d, want %d", path, v.PeriodQuota, crashBudget)
	}
	return v.Used
}

// budgetGaps lists each user and key whose period counter differs from
// the sum of its consume rows this month (none open: the load is over).
func budgetGaps(t *testing.T, st store.Store, url string) []string {
	ctx := context.Background()
	var gaps []string
	ids := map[string]int64{}
	for _, a := range crashUsers {
		u, err := st.Users().GetByUsername(ctx, a.name)
		if err != nil {
			t.Fatal(err)
		}
		ids[a.name] = u.ID
		rows := totals(t, st, u.ID, 0).consume
		if used := periodUsed(t, url, fmt.Sprintf("/api/users/%d", u.ID)); used != rows {
			gaps = append(gaps, fmt.Sprintf("user %s: counter %d, consume rows %d", a.name, used, rows))
		}
	}
	for _, k := range crashKeys {
		tok, err := st.Tokens().GetByName(ctx, ids[k.user], k.name)
		if err != nil {
			t.Fatal(err)
		}
		rows := totals(t, st, ids[k.user], tok.ID).consume
		if used := periodUsed(t, url, fmt.Sprintf("/api/tokens/%d", tok.ID)); used != rows {
			gaps = append(gaps, fmt.Sprintf("key %s: counter %d, consume rows %d", k.name, used, rows))
		}
	}
	return gaps
}

// checkBudgetsMatchRows waits for the budget sweep (it runs once the dead
// node's lease lapsed and its balance journal is settled) and then wants
// every period counter equal to its consume rows: the estimates of the
// calls in flight at the kill are no longer counted.
func checkBudgetsMatchRows(t *testing.T, st store.Store, url string, limit time.Duration) {
	t.Helper()
	gaps := budgetGaps(t, st, url)
	for deadline := time.Now().Add(limit); len(gaps) > 0 && time.Now().Before(deadline); gaps = budgetGaps(t, st, url) {
		time.Sleep(200 * time.Millisecond)
	}
	for _, g := range gaps {
		t.Error("period budget after the kill: " + g)
	}
}
