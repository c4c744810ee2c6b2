package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/cli"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
	"github.com/turnpike-gw/turnpike/internal/testkit/redisproc"
)

const booksRoot = "root-token-for-books-tests"

// booksUpstream answers chat calls with 1000 prompt and 500 completion
// tokens; a message "fail" gets a 500, and a stream pauses after its first
// chunk (long enough for a client to leave) before it reports its usage.
func booksUpstream(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer books-upstream-key" || r.URL.Path != "/v1/chat/completions" {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"unexpected %s %s"}}`, r.URL.Path, r.Header.Get("Authorization"))
			return
		}
		calls.Add(1)
		if bytes.Contains(raw, []byte(`"fail"`)) {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"upstream broke","type":"server_error"}}`)
			return
		}
		usage := `"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`
		if !bytes.Contains(raw, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],%s}`, usage)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(ev string) {
			fmt.Fprintf(w, "data: %s\n\n", ev)
			w.(http.Flusher).Flush()
		}
		send(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"po"},"finish_reason":null}]}`)
		time.Sleep(300 * time.Millisecond)
		send(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":{"content":"ng"},"finish_reason":"stop"}]}`)
		send(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[],` + usage + `}`)
		send(`[DONE]`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestTheBooksOfAMixedRun drives the gateway as an operator would: calls
// that succeed, fail and are left mid-stream, a top-up and a negative
// adjustment; every consume row carries its upstream cost at the channel's
// discount, the margin sums them, the books reconcile, and a lost usage row
// is found by the API and by the command.
func TestTheBooksOfAMixedRun(t *testing.T) {
	t.Run("balances in memory", func(t *testing.T) { booksOfAMixedRun(t) })
	t.Run("balances in Redis", func(t *testing.T) {
		rs := redisproc.Start(t)
		booksOfAMixedRun(t, testkit.WithConfig(func(c *config.Config) { c.Redis = rs.URL() }))
	})
}

func booksOfAMixedRun(t *testing.T, opts ...testkit.Option) {
	up, calls := booksUpstream(t)
	keyQuota := int64(5_000_000)
	g := testkit.Start(t, append(opts, testkit.WithRootToken(booksRoot),
		testkit.WithUsers(config.SeedUser{Username: "ann", Password: "ann-password", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "ann-key", User: "ann", Key: "sk-ann-books", Quota: &keyQuota}),
		testkit.WithChannels(config.SeedChannel{Name: "discounted", Type: "openai", BaseURL: up.URL, Key: "books-upstream-key",
			Models: []string{"gpt-x"}, Groups: []string{"default"}, Cost: map[string]any{"discount": 0.5}}),
		// 1000 × $2 + 500 × $8 per million tokens = $0.006 = 3000 quota units; upstream pays half.
		testkit.WithModels(map[string]config.SeedPrice{"gpt-x": {InputPerMTok: 2, OutputPerMTok: 8}}))...)

	chat := func(content string) map[string]any {
		return map[string]any{"model": "gpt-x", "messages": []any{map[string]any{"role": "user", "content": content}}}
	}
	for range 2 {
		if code, body := g.Do(t, "POST", "/v1/chat/completions", "sk-ann-books", chat("ping")); code != 200 {
			t.Fatalf("chat: %d %v", code, body)
		}
	}
	if code, _ := g.Do(t, "POST", "/v1/chat/completions", "sk-ann-books", chat("fail")); code < 500 {
		t.Fatalf("a failing upstream answered %d", code)
	}
	leaveStream(t, g, "sk-ann-books")

	code, users := g.Do(t, "GET", "/api/users", booksRoot, nil)
	if code != 200 {
		t.Fatalf("users: %d", code)
	}
	var annID int64
	for _, u := range users["items"].([]any) {
		if m := u.(map[string]any); m["username"] == "ann" {
			annID = int64(m["id"].(float64))
		}
	}
	for _, delta := range []int{20_000, -5_000} {
		if code, body := g.Do(t, "POST", fmt.Sprintf("/api/users/%d/quota", annID), booksRoot, map[string]any{"delta": delta}); code != 200 {
			t.Fatalf("quota %d: %d %v", delta, code, body)
		}
	}
	var consumes []map[string]any
	if !testkit.WaitFor(15*time.Second, 50*time.Millisecond, func() bool {
		_, logs := g.Do(t, "GET", "/api/logs?type=consume&page_size=100", booksRoot, nil)
		items, _ := logs["items"].([]any)
		consumes = consumes[:0]
		for _, it := range items {
			consumes = append(consumes, it.(map[string]any))
		}
		return len(consumes) == 3
	}) {
		t.Fatalf("consume rows: %v (upstream calls %d)", consumes, calls.Load())
	}
	// The call left mid-stream is billed what the gateway could count; at
	// group ratio 1 every charge here is exact, so its upstream cost is
	// half its quota's dollars.
	var charged int64
	for _, row := range consumes {
		quota := int64(row["quota"].(float64))
		charged += quota
		other := row["other"].(map[string]any)
		if wantCost := usd(quota, 1_000_000); other["upstream_cost_usd"] != wantCost {
			t.Fatalf("consume row charged %d at upstream cost %v, want %q: %v", quota, other["upstream_cost_usd"], wantCost, row)
		}
	}
	if charged <= 6000 {
		t.Fatalf("charged %d in all, want two whole calls of 3000 and the one left mid-stream", charged)
	}

	code, margin := g.Do(t, "GET", "/api/reports/margin?group_by=channel", booksRoot, nil)
	items, _ := margin["items"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("margin: %d %v", code, margin)
	}
	want := map[string]any{"name": "discounted", "requests": 3.0, "charged_quota": float64(charged), "charged_usd": usdNumber(charged, 500_000),
		"upstream_cost_usd": usdNumber(charged, 1_000_000), "margin_usd": usdNumber(charged, 1_000_000)}
	for k, v := range want {
		if got := items[0].(map[string]any)[k]; got != v {
			t.Errorf("margin %s = %v, want %v (%v)", k, got, v, items[0])
		}
	}

	rep := reconcile(t, g, true)
	if len(rep.Users) != 1 || len(rep.Tokens) != 1 || rep.Users[0].BalanceEnd != 10_000_000+20_000-5_000-charged {
		t.Fatalf("reconciliation: %+v", rep)
	}
	if code := reconcileCommand(t, g); code != 0 {
		t.Fatalf("turnpike reconcile exited %d on books that agree", code)
	}

	db := testdb.Open(t, "sqlite", strings.TrimPrefix(g.App.Config.Database, "sqlite:"))
	if _, err := db.Exec("DELETE FROM usage_logs WHERE id = (SELECT MIN(id) FROM usage_logs WHERE type = 'consume')"); err != nil {
		t.Fatal(err)
	}
	rep = reconcile(t, g, false)
	named := map[string]bool{}
	for _, d := range rep.Differences {
		named[d.Account] = d.UserID == annID
	}
	if !named["user"] || !named["token"] {
		t.Fatalf("differences %+v, want ann and her key named", rep.Differences)
	}
	if code := reconcileCommand(t, g); code != 1 {
		t.Fatalf("turnpike reconcile exited %d after a usage row was deleted, want 1", code)
	}
}

// usd is n/d dollars as the reports write them.
func usd(n, d int64) string {
	s := strings.TrimRight(big.NewRat(n, d).FloatString(12), "0")
	return strings.TrimSuffix(s, ".")
}

// usdNumber is usd as the JSON number a report writes.
func usdNumber(n, d int64) float64 {
	f, _ := strconv.ParseFloat(usd(n, d), 64)
	return f
}

// leaveStream starts a streamed call and closes it after the first chunk.
func leaveStream(t *testing.T, g *testkit.Gateway, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"ping"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if resp.StatusCode != 200 || err != nil || !strings.HasPrefix(line, "data:") {
		t.Fatalf("stream: %d %q %v", resp.StatusCode, line, err)
	}
	cancel()
	resp.Body.Close()
}

type reconciliation struct {
	OK        bool `json:"ok"`
	OpenHolds int  `json:"open_holds"`
	Users     []struct {
		UserID     int64 `json:"user_id"`
		BalanceEnd int64 `json:"balance_end"`
		OK         bool  `json:"ok"`
	} `json:"users"`
	Tokens      []map[string]any `json:"tokens"`
	Differences []struct {
		Account string `json:"account"`
		UserID  int64  `json:"user_id"`
	} `json:"differences"`
}

func reconcile(t *testing.T, g *testkit.Gateway, wantOK bool) reconciliation {
	t.Helper()
	resp := g.DoRaw(t, "GET", "/api/reports/reconcile", booksRoot, nil)
	defer resp.Body.Close()
	var rep reconciliation
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(raw, &rep) != nil || rep.OK != wantOK {
		t.Fatalf("reconcile: %d %s, want ok %v", resp.StatusCode, raw, wantOK)
	}
	return rep
}

func reconcileCommand(t *testing.T, g *testkit.Gateway) int {
	var out, errb bytes.Buffer
	env := map[string]string{"TURNPIKE_DATABASE": g.App.Config.Database}
	code := cli.Main([]string{"reconcile", "--since", fmt.Sprint(time.Now().Add(-time.Hour).Unix())}, &out, &errb,
		func(k string) string { return env[k] })
	if !json.Valid(out.Bytes()) {
		t.Fatalf("reconcile printed %q (stderr %q)", out.String(), errb.String())
	}
	if code == 1 && !strings.Contains(errb.String(), "usage row") {
		t.Errorf("reconcile's complaint %q names no usage row", errb.String())
	}
	return code
}

// Every chat surface's consume row records the call's upstream cost at the
// channel's own price for the model it was mapped to, whatever the
// caller's group ratio.
func TestEverySurfaceRecordsItsUpstreamCostAtTheChannelsPrice(t *testing.T) {
	up := fakeOpenAIChat(t, func(r *http.Request) bool {
		return r.URL.Path == "/v1/chat/completions" && r.Header.Get("Authorization") == "Bearer own-price-key"
	})
	g := testkit.Start(t, testkit.WithRootToken(booksRoot), testkit.WithGroups(map[string]float64{"default": 1, "vip": 0.5}),
		testkit.WithUsers(config.SeedUser{Username: "vic", Password: "vic-password", Role: "user", Group: "vip", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "vic", Key: "sk-vic-books"}),
		testkit.WithChannels(config.SeedChannel{Name: "own-price", Type: "openai", BaseURL: up.URL, Key: "own-price-key",
			Models: []string{"gpt-4o"}, Groups: []string{"vip"}, ModelMapping: map[string]string{"gpt-4o": "gpt-4o-2024"},
			Cost: map[string]any{"discount": 0.9, "prices": map[string]any{"gpt-4o-2024": map[string]any{"input_per_mtok": 0.5, "output_per_mtok": 1}}}}),
		// 1000 × $1 + 500 × $2 per million = $0.002, 500 units at vip's 0.5;
		// the channel pays 1000 × $0.5 + 500 × $1 per million = $0.001.
		testkit.WithModels(map[string]config.SeedPrice{"gpt-4o": {InputPerMTok: 1, OutputPerMTok: 2}}))
	calls := testkit.SurfaceCalls("gpt-4o")
	for _, c := range calls {
		if code, body := g.DoSurface(t, c, "sk-vic-books"); code != 200 {
			t.Fatalf("%s: %d %s", c.Name, code, body)
		}
	}
	var rows []any
	testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool {
		_, logs := g.Do(t, "GET", "/api/logs?type=consume&page_size=50", booksRoot, nil)
		rows, _ = logs["items"].([]any)
		return len(rows) == len(calls)
	})
	if len(rows) != len(calls) {
		t.Fatalf("consume rows: %d, want %d", len(rows), len(calls))
	}
	for _, r := range rows {
		row := r.(map[string]any)
		other := row["other"].(map[string]any)
		if row["quota"] != 500.0 || other["upstream_cost_usd"] != "0.001" {
			t.Errorf("%v row: quota %v, upstream cost %v; want 500 and \"0.001\"", other["surface"], row["quota"], other["upstream_cost_usd"])
		}
	}
}
