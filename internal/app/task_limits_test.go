package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// taskGateway runs the synthetic task plugin against the fake vendor for
// one key, with the given limits set on that key through the admin API.
func taskGateway(t *testing.T, limits string) (*testkit.Gateway, *vendor) {
	t.Helper()
	v := &vendor{jobs: map[string]string{}}
	vsrv := v.server(t)
	src, err := os.ReadFile("../task/testdata/pertask.js")
	if err != nil {
		t.Fatal(err)
	}
	g := testkit.Start(t, testkit.WithRootToken("root-secret"), testkit.WithPollInterval(50*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "bob", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "bob", Key: "sk-task-user"}),
		testkit.WithModels(map[string]config.SeedPrice{"acme-v1": {PerCall: 0.1}}))
	if code, body := g.Do(t, "POST", "/api/plugin/task", "root-secret", map[string]any{"source": string(src)}); code/100 != 2 {
		t.Fatalf("upload: %d %v", code, body)
	}
	if code, body := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
		"name": "acme", "type": "task_plugin", "base_url": vsrv.URL, "key": "vendor-secret",
		"models": []string{"acme-v1"}, "settings": map[string]any{"task_plugin_key": "acme"}}); code != 200 {
		t.Fatalf("channel: %d %v", code, body)
	}
	if code, body := g.Do(t, "PATCH", "/api/tokens/1", "root-secret", json.RawMessage(limits)); code != 200 {
		t.Fatalf("limits: %d %v", code, body)
	}
	return g, v
}

func submitVideo(t *testing.T, g *testkit.Gateway) (int, map[string]any, string) {
	t.Helper()
	resp := g.DoRaw(t, "POST", "/acme/v1/videos", "sk-task-user", map[string]any{"model": "acme-v1", "prompt": "a cat"})
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body, resp.Header.Get("Retry-After")
}

func TestTaskSubmissionsCountAgainstTheKeysRateLimit(t *testing.T) {
	g, _ := taskGateway(t, `{"rpm":1}`)
	if code, body, _ := submitVideo(t, g); code != 200 {
		t.Fatalf("first submit: %d %v", code, body)
	}
	code, body, retry := submitVideo(t, g)
	if code != 429 || retry == "" || !contains(fmt.Sprint(body["error"]), "rate_limit_exceeded") {
		t.Fatalf("second submit within the minute: %d %v (Retry-After %q)", code, body, retry)
	}
}

func TestTaskReservationsAreHeldAgainstThePeriodBudgetAndGivenBackOnRefund(t *testing.T) {
	// One video is 50,000 units ($0.1 at 500,000 a dollar): the day's budget
	// holds one at a time.
	g, v := taskGateway(t, `{"period_quota":60000,"period":"day"}`)
	code, first, _ := submitVideo(t, g)
	if code != 200 {
		t.Fatalf("first submit: %d %v", code, first)
	}
	code, body, _ := submitVideo(t, g)
	if code != 429 || !contains(fmt.Sprint(body["error"]), "budget_exceeded") {
		t.Fatalf("a second video past the budget: %d %v", code, body)
	}
	v.set("job-1", "gone") // the vendor lost it: failure and refund
	waitTask(t, g, first["id"].(string), "FAILURE")
	ok := testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
		code, _, _ = submitVideo(t, g)
		return code == 200
	})
	if !ok {
		t.Fatalf("the refunded task's budget was never given back: last submit %d", code)
	}
}
