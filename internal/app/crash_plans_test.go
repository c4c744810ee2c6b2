package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/testkit/redisproc"
)

// A gateway killed while a plan-covered call waits on its upstream has
// drawn that call's reservation from the plan's window, and may have
// answered a call whose row was still queued in its billing writer. The
// next start's plan sweep ends both once the dead node's lease lapsed, so
// the window counts exactly what the stored rows were charged — on the
// database path and with the windows (and balances) in Redis.
func TestKilledGatewayLeavesThePlanWindowAtItsStoredCharges(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	for _, withRedis := range []bool{false, true} {
		name := map[bool]string{false: "database", true: "redis"}[withRedis]
		t.Run(name, func(t *testing.T) {
			var env []string
			if withRedis {
				env = append(env, "TURNPIKE_REDIS="+redisproc.Start(t).URL())
			}
			killMidPlanCall(t, env)
		})
	}
}

// oneCall is what a covered call of m is charged: 1000 input tokens at 1
// and 500 output tokens at 2 per million, at a million quota per dollar.
const oneCall = 2000

func killMidPlanCall(t *testing.T, env []string) {
	bin := buildGateway(t)
	arrived := make(chan struct{}, 1)
	up := hangingUpstream(t, arrived)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "plans.db")
	cfgPath := writePlanCrashConfig(t, dir, dbPath, up.URL)

	first := startGateway(t, bin, cfgPath, env...)
	first.showLogOnFailure(t, "killed")
	user := grantCrashPlan(t, first.url, dbPath)
	if code := planCall(first.url, "m"); code != 200 {
		t.Fatalf("a covered call answered %d", code)
	}
	waitPlanRows(t, first.url, oneCall)
	go planCall(first.url, "slow")
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow call never reached the upstream")
	}
	// Answered, its row most likely still queued when the kill comes.
	if code := planCall(first.url, "m"); code != 200 {
		t.Fatalf("the second covered call answered %d", code)
	}
	if held := windowUsed(t, first.url, user); held <= 2*oneCall {
		t.Fatalf("the window counts %d with a call in flight, want more than %d", held, 2*oneCall)
	}
	first.kill()

	second := startGateway(t, bin, cfgPath, env...)
	second.showLogOnFailure(t, "restarted")
	defer second.stop(t)
	var got, rows int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		got, rows = windowUsed(t, second.url, user), planRowsSum(t, second.url)
		if got == rows {
			break
		}
	}
	if got != rows || (rows != oneCall && rows != 2*oneCall) {
		t.Fatalf("the window counts %d after the restart, its stored rows %d: the killed node's draws were not ended exactly", got, rows)
	}
	_, rep := planRootCall(t, second.url, "GET", "/api/reports/reconcile", nil)
	ps, _ := rep["plans"].([]any)
	if len(ps) != 1 {
		t.Fatalf("reconcile shows %d plan windows, want 1: %v", len(ps), rep["plans"])
	}
	w := ps[0].(map[string]any)
	if w["ok"] != true || w["live"] != float64(rows) || w["rows_sum"] != float64(rows) || w["open_draws"] != float64(0) {
		t.Errorf("reconcile of the window: %v", w)
	}
	t.Logf("window %d = stored rows %d after the restart", got, rows)
}

// planRowsSum is the quota of the stored consume rows that drew from a plan.
func planRowsSum(t *testing.T, url string) int64 {
	t.Helper()
	_, logs := planRootCall(t, url, "GET", "/api/logs?type=consume&page_size=100", nil)
	var sum int64
	items, _ := logs["items"].([]any)
	for _, it := range items {
		row := it.(map[string]any)
		if other, _ := row["other"].(map[string]any); other != nil && other["plan"] != nil {
			sum += int64(row["quota"].(float64))
		}
	}
	return sum
}

// waitPlanRows waits until the plan-drawn rows stored sum to want.
func waitPlanRows(t *testing.T, url string, want int64) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); planRowsSum(t, url) != want; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the plan-drawn rows never summed to %d", want)
		}
	}
}

// hangingUpstream answers model m at once and holds model slow until the
// client goes, telling arrived when a slow call reached it.
func hangingUpstream(t *testing.T, arrived chan<- struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"slow"`) {
			select {
			case arrived <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const planCrashKey = "sk-crash-plan-alice"

func writePlanCrashConfig(t *testing.T, dir, dbPath, upstream string) string {
	t.Helper()
	cfg := fmt.Sprintf(`database: "sqlite:%s"
root_token: %q
retry_count: 0
quota_per_usd: 1000000
users:
  - {username: alice, password: "pw-alice-123456", role: user, group: default, quota: 50000000}
tokens:
  - {name: k, user: alice, key: %q, quota: -1}
channels:
  - {name: up, type: openai, base_url: %q, key: k, models: [m, slow], groups: [default]}
models:
  m: {input_per_mtok: 1, output_per_mtok: 2}
  slow: {input_per_mtok: 1, output_per_mtok: 2}
`, dbPath, crashRoot, planCrashKey, upstream)
	path := filepath.Join(dir, "turnpike.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// grantCrashPlan defines a plan of one five-hour window covering m and
// slow and grants it to alice, answering her id.
func grantCrashPlan(t *testing.T, url, dbPath string) int64 {
	t.Helper()
	code, plan := planRootCall(t, url, "POST", "/api/plans", map[string]any{"name": "coder", "price_usd": 20, "period": "month",
		"windows": []map[string]any{{"hours": 5, "quota": 1_000_000}}, "models": []string{"m", "slow"}, "priority": 1})
	if code != 200 {
		t.Fatalf("create plan: %d %v", code, plan)
	}
	u, err := openBooks(t, dbPath).Users().GetByUsername(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := planRootCall(t, url, "POST", fmt.Sprintf("/api/users/%d/plans", u.ID), map[string]any{"plan_id": plan["id"]}); code != 200 {
		t.Fatalf("grant: %d %v", code, body)
	}
	return u.ID
}

func planCall(url, model string) int {
	body := fmt.Sprintf(`{"model":%q,"max_tokens":500,"messages":[{"role":"user","content":"hello"}]}`, model)
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+planCrashKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// windowUsed is the first window's used of alice's plan, as the admin API
// shows it.
func windowUsed(t *testing.T, url string, user int64) int64 {
	t.Helper()
	code, held := planRootCall(t, url, "GET", fmt.Sprintf("/api/users/%d/plans", user), nil)
	items, _ := held["items"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("user plans: %d %v", code, held)
	}
	w := items[0].(map[string]any)["windows"].([]any)[0].(map[string]any)
	return int64(w["used"].(float64))
}

func planRootCall(t *testing.T, url, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url+path, rd)
	req.Header.Set("Authorization", "Bearer "+crashRoot)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}
