package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/testkit/redisproc"
)

// With live balances in Redis, a node killed with SIGKILL has answered
// calls whose settle only reached Redis's journal (the writer stores
// batches every 100 ms). The next node's sweep writes those settles and
// their rows instead of refunding them: every call a client got a 200 for
// has exactly one consume row, and the books stay exact. A call in flight
// at the kill may have been settled and journaled with its answer still on
// the way (the client saw the connection drop), so it may have a row too:
// the rows are at least the answered calls and at most those plus the
// calls in flight at the kill, no request has two, and the money matches
// the rows exactly. Every user and key has a period budget too, whose
// counter in Redis outlives the kill: the estimates of the calls in flight
// are taken out of it by the sweep, so it ends equal to the rows.
func TestKilledGatewayWithRedisChargesEveryCallItAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	rs := redisproc.Start(t)
	bin := buildGateway(t)
	up := delayedUpstream(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "crash.db")
	cfgPath := writeCrashConfig(t, dir, dbPath, up.URL)
	withBudgets(t, cfgPath)

	first := startGateway(t, bin, cfgPath, "TURNPIKE_REDIS="+rs.URL())
	first.showLogOnFailure(t, "killed")
	calls := driveLoad(t, first.url, 1500*time.Millisecond, first.kill)
	answered, unanswered := calls.ok.Load(), calls.inFlight.Load()
	if answered == 0 || unanswered == 0 {
		t.Fatalf("the load did not overlap the kill: %d answered, %d in flight", answered, unanswered)
	}

	second := startGateway(t, bin, cfgPath, "TURNPIKE_REDIS="+rs.URL())
	second.showLogOnFailure(t, "restarted")
	defer second.stop(t)
	st := openBooks(t, dbPath)
	waitNoOpenHolds(t, st, 15*time.Second)
	// The sweep writes the journaled settles once the dead node's lease
	// lapsed; on a loaded machine that can take a while.
	for deadline := time.Now().Add(20 * time.Second); int64(len(storedConsumeRows(t, st))) < answered && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	// A reserve that never reached the database leaves no hold to wait
	// for, only a journal record, given back once the dead node's lease
	// lapsed: wait for the live balances to agree before judging them.
	waitLiveEqualsDatabase(t, st, second.url, 15*time.Second)
	checkBooks(t, st, second.url)
	checkBudgetsMatchRows(t, st, second.url, 15*time.Second)
	rows := storedConsumeRows(t, st)
	consumed := int64(len(rows))
	if consumed < answered || consumed > answered+unanswered {
		t.Fatalf("%d calls answered 200 before the kill and %d in flight at it, %d consume rows: "+
			"want between %d and %d (fewer: an answered call went unbilled; more: a call was billed twice)",
			answered, unanswered, consumed, answered, answered+unanswered)
	}
	seen := map[string]bool{}
	for _, l := range rows {
		if l.RequestID != "" && seen[l.RequestID] {
			t.Errorf("request %s has two consume rows", l.RequestID)
		}
		seen[l.RequestID] = true
	}
	t.Logf("%d answered, %d in flight at the kill, %d consume rows", answered, unanswered, consumed)
}

func waitLiveEqualsDatabase(t *testing.T, st store.Store, url string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		agree := true
		for _, a := range crashUsers {
			u, err := st.Users().GetByUsername(context.Background(), a.name)
			if err != nil {
				t.Fatal(err)
			}
			if adminQuota(t, url, fmt.Sprintf("/api/users/%d", u.ID)) != u.Quota {
				agree = false
			}
		}
		if agree {
			return
		}
	}
}

func storedConsumeRows(t *testing.T, st store.Store) []store.UsageLog {
	var out []store.UsageLog
	for _, l := range allLogs(t, st, store.LogFilter{}) {
		if l.Type == store.LogConsume {
			out = append(out, l)
		}
	}
	return out
}
