package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// fakeModelList serves one provider's model list at path, only to key.
func fakeModelList(t *testing.T, path, header, want, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || r.Header.Get(header) != want {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"bad key or path `+r.URL.Path+`"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestUpstreamModelsAsksEachProviderInItsOwnWay(t *testing.T) {
	openai := fakeModelList(t, "/v1/models", "Authorization", "Bearer sk-up",
		`{"object":"list","data":[{"id":"gpt-b"},{"id":"gpt-a"},{"id":"gpt-a"}]}`)
	ark := fakeModelList(t, "/api/v3/models", "Authorization", "Bearer sk-up", `{"data":[{"id":"doubao-pro"}]}`)
	claude := fakeModelList(t, "/v1/models", "x-api-key", "sk-up", `{"data":[{"id":"claude-z","type":"model"}],"has_more":false}`)
	gem := fakeModelList(t, "/v1beta/models", "x-goog-api-key", "sk-up", `{"models":[{"name":"models/gemini-x"}]}`)
	g := testkit.Start(t, testkit.WithRootToken("root-secret"))
	cases := []struct {
		typ, base string
		want      []any
	}{
		{"openai", openai.URL, []any{"gpt-a", "gpt-b"}},
		{"volcengine", ark.URL, []any{"doubao-pro"}},
		{"anthropic", claude.URL, []any{"claude-z"}},
		{"gemini", gem.URL, []any{"gemini-x"}},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			code, ch := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
				"name": "c-" + tc.typ, "type": tc.typ, "base_url": tc.base, "key": "sk-up\nsk-second", "models": []string{"m"}})
			if code != 200 {
				t.Fatalf("create: %d %v", code, ch)
			}
			code, body := g.Do(t, "GET", fmt.Sprintf("/api/channels/%v/upstream-models", ch["id"]), "root-secret", nil)
			if code != 200 || fmt.Sprint(body["models"]) != fmt.Sprint(tc.want) {
				t.Fatalf("%d %v, want %v", code, body, tc.want)
			}
		})
	}
	t.Run("a failing provider is a 502 that names the status", func(t *testing.T) {
		code, ch := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
			"name": "wrong-key", "type": "openai", "base_url": openai.URL, "key": "sk-wrong", "models": []string{"m"}})
		if code != 200 {
			t.Fatal(code)
		}
		code, body := g.Do(t, "GET", fmt.Sprintf("/api/channels/%v/upstream-models", ch["id"]), "root-secret", nil)
		msg := fmt.Sprint(body["error"])
		if code != 502 || !contains(msg, "401") || contains(msg, "sk-wrong") {
			t.Fatalf("%d %v", code, body)
		}
	})
}

func TestChannelsOfUnknownTypesOrBadSettingsAreRefusedWhenSaved(t *testing.T) {
	g := testkit.Start(t, testkit.WithRootToken("root-secret"))
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a type nobody knows", map[string]any{"name": "x1", "type": 777, "key": "k"}, "type"},
		{"azure without its resource address", map[string]any{"name": "x2", "type": "azure", "key": "k"}, "base_url"},
		{"custom without an address", map[string]any{"name": "x3", "type": "custom", "key": "k"}, "base_url"},
		{"azure deployments that are not names", map[string]any{"name": "x4", "type": "azure", "base_url": "https://r.example", "key": "k",
			"settings": map[string]any{"deployments": map[string]any{"gpt-4o": 5}}}, "settings.deployments.gpt-4o"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := g.Do(t, "POST", "/api/channels", "root-secret", tc.body)
			if code != 400 || !contains(fmt.Sprint(body["error"]), tc.field) {
				t.Fatalf("%d %v, want 400 naming %s", code, body, tc.field)
			}
		})
	}
	for _, typ := range []any{"kling", "deepseek", 45, "openrouter", "zhipu_v4"} {
		code, body := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{"name": fmt.Sprint("ok-", typ), "type": typ, "key": "k"})
		if code != 200 {
			t.Fatalf("type %v: %d %v", typ, code, body)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
