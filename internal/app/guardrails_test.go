package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const guardPlugin = `export const meta = { apiVersion: 1, kind: "guardrail", key: "brand-guard", name: "Brand guard",
  version: "1.0.0", author: { name: "tests" } };
export function checkRequest(ctx) {
  if (ctx.text.includes("falcon")) return { action: "block", reason: "code name in " + ctx.model };
  if (ctx.text.includes("spin")) { for (;;) {} }
  return { action: "allow" };
}`

// TestGuardrailsThroughTheAdministrationAndARealCall wires the whole path:
// a guardrail plugin uploaded through the task plugin administration, a
// plugin guardrail and a pii guardrail created under /api/guardrails, and
// chat calls that they block (no upstream call) or let through.
func TestGuardrailsThroughTheAdministrationAndARealCall(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"g-model","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(up.Close)
	weight := 1
	g := testkit.Start(t, testkit.WithRootToken("root-token-guard"),
		testkit.WithUsers(config.SeedUser{Username: "u", Password: "u-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "u", Key: "sk-guard-key"}),
		testkit.WithChannels(config.SeedChannel{Name: "c", Type: "openai", BaseURL: up.URL, Key: "up", Models: []string{"g-model"}, Groups: []string{"default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{"g-model": {InputPerMTok: 1, OutputPerMTok: 1}}))
	must := func(status int, body map[string]any, want int) {
		t.Helper()
		if status != want {
			t.Fatalf("status %d, want %d: %v", status, want, body)
		}
	}
	st, body := g.Do(t, "POST", "/api/plugin/task", "root-token-guard", map[string]any{"source": guardPlugin})
	must(st, body, 200)
	st, body = g.Do(t, "POST", "/api/guardrails", "root-token-guard", map[string]any{"name": "brand", "type": "plugin", "config": map[string]any{"plugin": "missing"}})
	must(st, body, 400)
	st, body = g.Do(t, "POST", "/api/guardrails", "root-token-guard", map[string]any{"name": "brand", "type": "plugin", "config": map[string]any{"plugin": "brand-guard"}, "stages": []string{"request"}})
	must(st, body, 200)
	st, body = g.Do(t, "POST", "/api/guardrails", "root-token-guard", map[string]any{"name": "no-cards", "type": "pii", "config": map[string]any{"action": "redact"}})
	must(st, body, 200)

	chat := func(text string) (int, map[string]any) {
		return g.Do(t, "POST", "/v1/chat/completions", "sk-guard-key", map[string]any{"model": "g-model", "messages": []any{map[string]any{"role": "user", "content": text}}})
	}
	st, body = chat("tell me about project falcon")
	if errObj, _ := body["error"].(map[string]any); st != 400 || errObj["code"] != "guardrail_blocked" || !strings.Contains(fmt.Sprint(errObj["message"]), "code name in g-model") {
		t.Fatalf("blocked call: %d %v", st, body)
	}
	if calls.Load() != 0 {
		t.Fatalf("the upstream saw %d calls", calls.Load())
	}
	// A plugin that loops is stopped at its deadline and fails closed; the
	// gateway answers the next call as usual.
	st, body = chat("spin please")
	if errObj, _ := body["error"].(map[string]any); st != 400 || errObj["code"] != "guardrail_blocked" {
		t.Fatalf("looping plugin: %d %v", st, body)
	}
	st, body = chat("card 4111 1111 1111 1111 please")
	must(st, body, 200)
	if calls.Load() != 1 {
		t.Fatalf("the upstream saw %d calls", calls.Load())
	}
	st, body = g.Do(t, "POST", "/api/guardrails/dry-run", "root-token-guard", map[string]any{"text": "falcon", "name": "brand"})
	if st != 200 || body["blocked"] != true || body["blocked_by"] != "brand" {
		t.Fatalf("dry run %d %v", st, body)
	}
}
