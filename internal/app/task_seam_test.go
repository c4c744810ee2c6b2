package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// A task submit and a chat call of one key pass one money seam: they count
// against the same rate limits and period budget, answer a refusal with the
// same headers, and leave usage rows of one shape.

// seamGateway serves, for bob's key sk-task-user, chat model m (at $1 per
// million tokens each way, on up) and task model acme-v1 ($0.1 a video,
// 50,000 units, through the synthetic plugin on the fake vendor), with the
// key's limits set to limits.
func seamGateway(t *testing.T, up string, quota int64, limits string) (*testkit.Gateway, *vendor) {
	t.Helper()
	v := &vendor{jobs: map[string]string{}}
	vsrv := v.server(t)
	src, err := os.ReadFile("../task/testdata/pertask.js")
	if err != nil {
		t.Fatal(err)
	}
	weight := 1
	g := testkit.Start(t, testkit.WithRootToken("root-secret"), testkit.WithPollInterval(50*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "bob", Password: "pw-longer", Role: "user", Group: "default", Quota: quota}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "bob", Key: "sk-task-user"}),
		testkit.WithChannels(config.SeedChannel{Name: "chat", Type: "openai", BaseURL: up, Key: "k", Models: []string{"m"},
			Groups: []string{"default"}, Weight: &weight, Settings: map[string]any{"failure_threshold": 1000}}),
		testkit.WithModels(map[string]config.SeedPrice{"acme-v1": {PerCall: 0.1}, "m": {InputPerMTok: 1, OutputPerMTok: 1}}))
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

// seamAnswer is what a client saw of one call.
type seamAnswer struct {
	status int
	body   map[string]any
	header http.Header
}

func chatCall(t *testing.T, g *testkit.Gateway, maxTokens int, prompt string) seamAnswer {
	t.Helper()
	resp := post(t, g.URL+"/v1/chat/completions", map[string]string{"Authorization": "Bearer sk-task-user"},
		fmt.Sprintf(`{"model":"m","max_tokens":%d,"messages":[{"role":"user","content":%q}]}`, maxTokens, prompt))
	body := readJSON(t, resp)
	return seamAnswer{resp.StatusCode, body, resp.Header}
}

func taskSubmit(t *testing.T, g *testkit.Gateway) seamAnswer {
	t.Helper()
	resp := g.DoRaw(t, "POST", "/acme/v1/videos", "sk-task-user", map[string]any{"model": "acme-v1", "prompt": "a cat"})
	body := readJSON(t, resp)
	return seamAnswer{resp.StatusCode, body, resp.Header}
}

// errorCode is the code of an OpenAI-dialect error body.
func errorCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// limitHeaders are the names of the traffic-control headers of an answer.
func limitHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if l := strings.ToLower(k); strings.HasPrefix(l, "x-ratelimit-") || l == "retry-after" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func sameHeaders(t *testing.T, what string, chat, task seamAnswer) {
	t.Helper()
	c, k := limitHeaders(chat.header), limitHeaders(task.header)
	if len(c) == 0 || fmt.Sprint(c) != fmt.Sprint(k) {
		t.Fatalf("%s: chat answered %d with %v, the task submit %d with %v", what, chat.status, c, task.status, k)
	}
}

func TestTaskSubmitAndChatCallShareTheKeysRateLimitAndItsHeaders(t *testing.T) {
	var calls atomic.Int64
	g, _ := seamGateway(t, usageUpstream(t, &calls, 0).URL, 10_000_000, `{"rpm":2}`)
	chat := chatCall(t, g, 16, "hi")
	if chat.status != 200 || chat.header.Get("x-ratelimit-remaining-requests") != "1" {
		t.Fatalf("chat call: %d %v %v", chat.status, chat.body, chat.header)
	}
	task := taskSubmit(t, g)
	if task.status != 200 || task.header.Get("x-ratelimit-remaining-requests") != "0" {
		t.Fatalf("the task submit after it must take the minute's second request: %d %v %v", task.status, task.body, task.header)
	}
	sameHeaders(t, "admitted", chat, task)

	chat, task = chatCall(t, g, 16, "hi"), taskSubmit(t, g)
	for _, a := range []seamAnswer{chat, task} {
		if a.status != 429 || errorCode(a.body) != "rate_limit_exceeded" || a.header.Get("Retry-After") == "" {
			t.Fatalf("a third request within the minute: %d %v %v", a.status, a.body, a.header)
		}
	}
	sameHeaders(t, "refused", chat, task)
	if calls.Load() != 1 {
		t.Fatalf("the chat upstream saw %d calls, want 1", calls.Load())
	}
}

func TestAChatCallInFlightHoldsTheConcurrencyATaskSubmitNeeds(t *testing.T) {
	var calls atomic.Int64
	g, _ := seamGateway(t, usageUpstream(t, &calls, 700*time.Millisecond).URL, 10_000_000, `{"concurrency":1}`)
	done := make(chan seamAnswer, 1)
	go func() { done <- chatCall(t, g, 16, "hi") }()
	if !testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return calls.Load() == 1 }) {
		t.Fatal("the chat call never reached its upstream")
	}
	task := taskSubmit(t, g)
	if task.status != 429 || errorCode(task.body) != "rate_limit_exceeded" {
		t.Fatalf("a submit while the key's only slot is taken: %d %v", task.status, task.body)
	}
	if chat := <-done; chat.status != 200 {
		t.Fatalf("chat call: %d %v", chat.status, chat.body)
	}
	if task = taskSubmit(t, g); task.status != 200 {
		t.Fatalf("a submit once the slot is free: %d %v", task.status, task.body)
	}
}

func TestTaskHoldAndChatReservationShareThePeriodBudget(t *testing.T) {
	var calls atomic.Int64
	// A video holds 50,000 units; a chat call with max_tokens 30,000
	// reserves over 15,000 more, past the 60,000 of the day.
	g, v := seamGateway(t, usageUpstream(t, &calls, 0).URL, 10_000_000, `{"period_quota":60000,"period":"day","rpm":100}`)
	task := taskSubmit(t, g)
	if task.status != 200 {
		t.Fatalf("submit: %d %v", task.status, task.body)
	}
	chat := chatCall(t, g, 30000, "hi")
	if chat.status != 429 || errorCode(chat.body) != "budget_exceeded" {
		t.Fatalf("a chat call past what the task's hold left of the budget: %d %v", chat.status, chat.body)
	}
	if small := chatCall(t, g, 16, "hi"); small.status != 200 {
		t.Fatalf("a chat call that fits: %d %v", small.status, small.body)
	}
	if again := taskSubmit(t, g); again.status != 429 || errorCode(again.body) != "budget_exceeded" {
		t.Fatalf("a second video past the budget: %d %v", again.status, again.body)
	} else {
		sameHeaders(t, "budget refusal", chat, again)
	}
	v.set("job-1", "gone") // failed and refunded: the hold goes back to the budget
	waitTask(t, g, task.body["id"].(string), "FAILURE")
	if !testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool { return chatCall(t, g, 30000, "hi").status == 200 }) {
		t.Fatal("the refunded task's hold was never given back to the chat call")
	}
}

func TestTaskSubmitAndChatCallRefusedForQuotaAnswerTheSameHeaders(t *testing.T) {
	var calls atomic.Int64
	// 40,000 units: less than a video (50,000) and than a chat call
	// reserving 100,000 output tokens (50,000).
	g, _ := seamGateway(t, usageUpstream(t, &calls, 0).URL, 40_000, `{"rpm":100}`)
	chat, task := chatCall(t, g, 100000, "hi"), taskSubmit(t, g)
	for _, a := range []seamAnswer{chat, task} {
		if a.status != 402 {
			t.Fatalf("over the balance: %d %v", a.status, a.body)
		}
	}
	sameHeaders(t, "quota refusal", chat, task)
}

func TestTaskAndChatUsageRowsShareOneShape(t *testing.T) {
	var calls atomic.Int64
	g, _ := seamGateway(t, usageUpstream(t, &calls, 0).URL, 10_000_000, `{"rpm":100}`)
	if chat := chatCall(t, g, 16, "hi"); chat.status != 200 {
		t.Fatalf("chat: %d %v", chat.status, chat.body)
	}
	task := taskSubmit(t, g)
	if task.status != 200 {
		t.Fatalf("submit: %d %v", task.status, task.body)
	}
	time.Sleep(200 * time.Millisecond)
	g.App.Writer.Flush(context.Background())
	st, err := sqlstore.Open(context.Background(), g.App.Config.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, _, err := st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	others := map[string]map[string]any{}
	for _, r := range rows {
		var o map[string]any
		if err := json.Unmarshal(r.Other, &o); err != nil {
			t.Fatalf("row %s other %s: %v", r.Model, r.Other, err)
		}
		others[r.Model] = o
	}
	chat, vid := others["m"], others["acme-v1"]
	if chat == nil || vid == nil {
		t.Fatalf("consume rows %v", others)
	}
	for _, k := range []string{"surface", "stream", "upstream_model", "group_ratio", "attempts", "price_version"} {
		if _, ok := chat[k]; !ok {
			t.Fatalf("the chat row lacks %s: %v", k, chat)
		}
		if _, ok := vid[k]; !ok {
			t.Fatalf("the task row lacks %s, which the chat row has: %v", k, vid)
		}
		if fmt.Sprintf("%T", chat[k]) != fmt.Sprintf("%T", vid[k]) {
			t.Fatalf("%s is %T on the chat row and %T on the task row", k, chat[k], vid[k])
		}
	}
	ca, _ := chat["attempts"].([]any)
	va, _ := vid["attempts"].([]any)
	if len(ca) != 1 || len(va) != 1 {
		t.Fatalf("attempts: chat %v, task %v", ca, va)
	}
	if ck, vk := keysOf(ca[0]), keysOf(va[0]); ck != vk {
		t.Fatalf("an attempt is %s on the chat row and %s on the task row", ck, vk)
	}
	if vid["task_id"] != task.body["id"] || vid["platform"] != "acme" {
		t.Fatalf("the task row lost its own facts: %v", vid)
	}
}

func keysOf(v any) string {
	m, _ := v.(map[string]any)
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return fmt.Sprint(ks)
}
