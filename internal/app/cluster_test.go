package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// TestThreeNodesOnOneDatabaseAndRedis runs three real gateway processes on
// one PostgreSQL database and one Redis (issue 15): they start together
// with the same seed file, serve mixed load round-robin, one is killed
// with SIGKILL under load and restarted, and then
//
//   - the holds of the killed process are released by the others;
//   - the books agree to the unit for every user and limited key: live
//     balance (admin API, i.e. Redis, on every node) = database balance =
//     Σ ledger = Σ usage rows (see crash_test.go);
//   - a key disabled through node B is refused by node C within 2 s.
func TestThreeNodesOnOneDatabaseAndRedis(t *testing.T) {
	pg, rd := os.Getenv("TURNPIKE_TEST_POSTGRES"), os.Getenv("TURNPIKE_TEST_REDIS")
	if pg == "" || rd == "" {
		t.Skip("set TURNPIKE_TEST_POSTGRES and TURNPIKE_TEST_REDIS to run three gateway processes on one database and Redis")
	}
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	dsn, rurl := testdb.Postgres(t, pg), freshRedis(t, rd)
	bin := buildGateway(t)
	up := clusterUpstream(t)
	dir := t.TempDir()
	cfgPath := writeCrashConfig(t, dir, filepath.Join(dir, "unused.db"), up.URL)
	env := []string{"TURNPIKE_DATABASE=" + dsn, "TURNPIKE_REDIS=" + rurl}

	// Three nodes started together with one seed file all come up.
	nodes := make([]*gateway, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); nodes[i] = startGateway(t, bin, cfgPath, env...) }()
	}
	wg.Wait()
	for i, n := range nodes {
		if n == nil {
			t.Fatalf("node %d did not start", i)
		}
	}

	var killed time.Time
	// Longer than the pair window, so that some calls in flight at the kill
	// have their reserve stored.
	calls := driveCluster(t, nodes, app.PairWindow+2500*time.Millisecond, func() { nodes[0].kill(); killed = time.Now() })
	if calls.ok.Load() == 0 || calls.inFlight.Load() == 0 {
		t.Fatalf("the load did not overlap the kill: %d settled, %d in flight", calls.ok.Load(), calls.inFlight.Load())
	}

	// A key disabled through node B is refused by node C within 2 s.
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	carol, err := st.Users().GetByUsername(context.Background(), "carol")
	if err != nil {
		t.Fatal(err)
	}
	key, err := st.Tokens().GetByName(context.Background(), carol.ID, "carol-unlimited")
	if err != nil {
		t.Fatal(err)
	}
	if code := chatOn(t, nodes[2].url, "sk-crash-carol-unlimited"); code != 200 && code != 402 {
		t.Fatalf("node C before the change: %d", code)
	}
	if code := patchRoot(t, nodes[1].url, fmt.Sprintf("/api/tokens/%d", key.ID), `{"status":"disabled"}`); code != 200 {
		t.Fatalf("disable the key on node B: %d", code)
	}
	changed := time.Now()
	if !testkit.WaitFor(2*time.Second, 10*time.Millisecond, func() bool {
		return chatOn(t, nodes[2].url, "sk-crash-carol-unlimited") == http.StatusForbidden
	}) {
		t.Fatal("node C still accepts a key disabled on node B 2 s later")
	}
	t.Logf("key disabled on node B refused by node C after %v", time.Since(changed).Round(time.Millisecond))

	// The killed node comes back as a new process; the dead process's
	// holds are released by a live node's sweep.
	nodes[0] = startGateway(t, bin, cfgPath, env...)
	waitNoOpenHolds(t, st, 60*time.Second)
	t.Logf("holds of the killed process released %v after the kill", time.Since(killed).Round(time.Millisecond))
	// The sweep that released the holds reconciles the dead process's Redis
	// journal right after; give it a moment before checking to the unit.
	testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
		for _, a := range crashUsers {
			u, err := st.Users().GetByUsername(context.Background(), a.name)
			if err != nil || adminQuota(t, nodes[1].url, fmt.Sprintf("/api/users/%d", u.ID)) != u.Quota {
				return false
			}
		}
		return true
	})
	var released int64
	for i, n := range nodes {
		r := checkBooks(t, st, n.url)
		if i == 0 {
			released = r
		}
	}
	if released == 0 {
		t.Error("no hold was released by the sweep: the kill caught no call after its reserve was stored")
	}
	t.Logf("%d calls settled before the kill, %d holds released by the sweep", calls.ok.Load(), released)
	for _, n := range nodes {
		n.stop(t)
	}
}

// driveCluster is driveLoad spread round-robin over the nodes; callers of
// a node that dies move on to the next node.
func driveCluster(t *testing.T, nodes []*gateway, d time.Duration, kill func()) *loadStats {
	stats := &loadStats{}
	client := &http.Client{Timeout: 10 * time.Second}
	stop := make(chan struct{})
	var dead atomic.Bool
	var wg sync.WaitGroup
	for w := range 36 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := (w + i) % len(nodes)
				if n == 0 && dead.Load() {
					continue
				}
				stats.call(client, nodes[n].url, w, i) // false: this node was killed under the call
			}
		}()
	}
	time.Sleep(d)
	for limit := time.Now().Add(15 * time.Second); stats.ok.Load() < 30 && time.Now().Before(limit); {
		time.Sleep(50 * time.Millisecond)
	}
	// A few slow calls on the node to be killed: their reserves are surely
	// stored (the writer flushes every 100 ms) when the kill comes, so the
	// sweep has holds to release, besides the calls whose reserve was still
	// queued (those the Redis journal gives back).
	for i := range 4 {
		go func() {
			body := fmt.Sprintf(`{"model":"m","max_tokens":500,"messages":[{"role":"user","content":"slow %d"}]}`, i)
			req, _ := http.NewRequest("POST", nodes[0].url+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+crashKeys[i].key)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(600 * time.Millisecond)
	dead.Store(true)
	kill()
	// The other nodes keep serving for a while after the kill.
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	return stats
}

func chatOn(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func patchRoot(t *testing.T, url, path, body string) int {
	t.Helper()
	req, _ := http.NewRequest("PATCH", url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+crashRoot)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// clusterUpstream is outlastingUpstream with one more case: a prompt saying
// "slow" is answered after 3 s.
func clusterUpstream(t *testing.T) *httptest.Server {
	inner := outlastingUpstream(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "slow ") {
			time.Sleep(3 * time.Second)
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
