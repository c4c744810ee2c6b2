package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// A guardrail attached to a team (applies_to.teams, CONTRACT §21) checks
// the calls of the team's members and no one else's.
func TestATeamGuardrailChecksItsMembersCallsOnly(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"g-model","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(up.Close)
	weight := 1
	const root = "root-token-team-guard"
	g := testkit.Start(t, testkit.WithRootToken(root),
		testkit.WithUsers(config.SeedUser{Username: "member", Password: "member-password", Role: "user", Group: "default", Quota: 1_000_000},
			config.SeedUser{Username: "outsider", Password: "outsider-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "km", User: "member", Key: "sk-team-member"},
			config.SeedToken{Name: "ko", User: "outsider", Key: "sk-team-outsider"}),
		testkit.WithChannels(config.SeedChannel{Name: "c", Type: "openai", BaseURL: up.URL, Key: "up", Models: []string{"g-model"}, Groups: []string{"default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{"g-model": {InputPerMTok: 1, OutputPerMTok: 1}}))
	do := func(what, method, path string, body any, want int) map[string]any {
		t.Helper()
		status, out := g.Do(t, method, path, root, body)
		if status != want {
			t.Fatalf("%s: status %d, want %d: %v", what, status, want, out)
		}
		return out
	}
	org := do("org", "POST", "/api/orgs", map[string]any{"name": "acme"}, 201)
	team := do("team", "POST", "/api/teams", map[string]any{"name": "search", "org_id": org["id"]}, 201)
	users := do("users", "GET", "/api/users?page_size=100", nil, 200)
	for _, u := range users["items"].([]any) {
		if m := u.(map[string]any); m["username"] == "member" {
			do("join", "PATCH", fmt.Sprintf("/api/users/%d", int64(m["id"].(float64))), map[string]any{"team_id": team["id"]}, 200)
		}
	}
	do("guardrail", "POST", "/api/guardrails", map[string]any{"name": "team-words", "type": "regex",
		"config": map[string]any{"patterns": []string{"falcon"}}, "applies_to": map[string]any{"teams": []any{team["id"]}}}, 200)

	chat := func(key string) (int, map[string]any) {
		return g.Do(t, "POST", "/v1/chat/completions", key, map[string]any{"model": "g-model",
			"messages": []any{map[string]any{"role": "user", "content": "tell me about project falcon"}}})
	}
	st, body := chat("sk-team-member")
	if e, _ := body["error"].(map[string]any); st != 400 || e["code"] != "guardrail_blocked" {
		t.Fatalf("the member's call: %d %v, want it blocked by the team's guardrail", st, body)
	}
	if calls.Load() != 0 {
		t.Fatalf("a blocked call reached the upstream (%d calls)", calls.Load())
	}
	if st, body := chat("sk-team-outsider"); st != 200 {
		t.Fatalf("the outsider's call: %d %v, want it through", st, body)
	}
}
