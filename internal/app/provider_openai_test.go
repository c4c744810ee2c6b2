package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// fakeAzure checks what Azure OpenAI checks: the deployment path, the
// api-version query and the api-key header.
func fakeAzure(t *testing.T, path, version, key string) *httptest.Server {
	return fakeOpenAIChat(t, func(r *http.Request) bool {
		return r.URL.Path == path && r.URL.Query().Get("api-version") == version && r.Header.Get("api-key") == key &&
			r.Header.Get("Authorization") == ""
	})
}

// fakeOpenAIChat answers every chat call that accepted admits with a
// get_weather tool call and 1000 prompt / 500 completion tokens, in the
// OpenAI wire, regular or streamed; anything else gets a 401.
func fakeOpenAIChat(t *testing.T, accepted func(*http.Request) bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Stream bool `json:"stream"`
			Tools  []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		if !accepted(r) || json.Unmarshal(raw, &body) != nil || len(body.Tools) != 1 {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"code":"401","message":"refused %s %s"}}`, r.URL, raw)
			return
		}
		args := `{\"city\":\"` + testkit.ToolCity + `\"}`
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":"%s"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`, testkit.ToolName, args)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"` + testkit.ToolName + `","arguments":""}}]},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + args + `"}}]},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAzureServesEverySurfaceThroughItsDeploymentAndIsBilledExactly(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]any
		path     string
		version  string
	}{
		{"deployment form", map[string]any{"deployments": map[string]any{"gpt-4o": "prod-4o"}},
			"/openai/deployments/prod-4o/chat/completions", "2024-10-21"},
		{"v1 form", map[string]any{"api_version": "v1"}, "/openai/v1/chat/completions", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			az := fakeAzure(t, tc.path, tc.version, "az-resource-key")
			g := testkit.Start(t, testkit.WithRootToken("root-secret"),
				testkit.WithUsers(config.SeedUser{Username: "ann", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
				testkit.WithTokens(config.SeedToken{Name: "k", User: "ann", Key: "sk-ann"}),
				testkit.WithChannels(config.SeedChannel{Name: "az", Type: "azure", BaseURL: az.URL, Key: "az-resource-key",
					Models: []string{"gpt-4o"}, Groups: []string{"default"}, Settings: tc.settings}),
				// 1000 × $1 + 500 × $2 per million tokens = $0.002 = 1000 quota units.
				testkit.WithModels(map[string]config.SeedPrice{"gpt-4o": {InputPerMTok: 1, OutputPerMTok: 2}}))
			calls := testkit.SurfaceCalls("gpt-4o")
			for _, c := range calls {
				code, body := g.DoSurface(t, c, "sk-ann")
				if code != 200 || !strings.Contains(body, testkit.ToolName) || !strings.Contains(body, testkit.ToolCity) {
					t.Fatalf("%s: %d %s", c.Name, code, body)
				}
			}
			for i, q := range g.ConsumedQuotas(t, "root-secret", "gpt-4o", len(calls)) {
				if q != 1000 {
					t.Fatalf("call %d charged %d, want 1000", i, q)
				}
			}
		})
	}
}

func TestPresetsReachTheirProviderPathThroughEverySurface(t *testing.T) {
	cases := []struct {
		typ      string
		path     string
		settings map[string]any
	}{
		{"volcengine", "/api/v3/chat/completions", nil},
		{"zhipu_v4", "/api/paas/v4/chat/completions", nil},
		{"openrouter", "/api/v1/chat/completions", map[string]any{"headers": map[string]any{"X-Title": "turnpike"}}},
		{"custom", "/serving/chat/completions", map[string]any{"path_prefix": "/serving"}},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			up := fakeOpenAIChat(t, func(r *http.Request) bool {
				return r.URL.Path == tc.path && r.Header.Get("Authorization") == "Bearer preset-key" &&
					(tc.typ != "openrouter" || r.Header.Get("X-Title") == "turnpike")
			})
			g := testkit.Start(t, testkit.WithRootToken("root-secret"),
				testkit.WithUsers(config.SeedUser{Username: "ann", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
				testkit.WithTokens(config.SeedToken{Name: "k", User: "ann", Key: "sk-ann"}),
				testkit.WithChannels(config.SeedChannel{Name: "p", Type: tc.typ, BaseURL: up.URL, Key: "preset-key",
					Models: []string{"m-1"}, Groups: []string{"default"}, Settings: tc.settings}),
				testkit.WithModels(map[string]config.SeedPrice{"m-1": {InputPerMTok: 1, OutputPerMTok: 2}}))
			calls := testkit.SurfaceCalls("m-1")
			for _, c := range calls {
				if code, body := g.DoSurface(t, c, "sk-ann"); code != 200 || !strings.Contains(body, testkit.ToolName) {
					t.Fatalf("%s: %d %s", c.Name, code, body)
				}
			}
			for i, q := range g.ConsumedQuotas(t, "root-secret", "m-1", len(calls)) {
				if q != 1000 {
					t.Fatalf("call %d charged %d, want 1000", i, q)
				}
			}
		})
	}
}
