package app_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// redirectTarget counts every request it receives and whether any carried a
// credential; it stands for an internal address a redirect points at.
type redirectTarget struct {
	hits, withCreds atomic.Int32
}

func (c *redirectTarget) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("x-api-key") != "" {
			c.withCreds.Add(1)
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// redirector answers every request with a 307 to target.
func redirector(t *testing.T, target string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestUpstreamRedirectsAreNotFollowed(t *testing.T) {
	var internal redirectTarget
	inner := internal.server(t)
	redirect := redirector(t, inner.URL)
	weight := 1
	g := testkit.Start(t,
		testkit.WithRootToken("root-secret"),
		testkit.WithUsers(config.SeedUser{Username: "bob", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "bob", Key: "sk-bob"}),
		testkit.WithChannels(config.SeedChannel{Name: "chat", Type: "openai", BaseURL: redirect.URL, Key: "channel-secret",
			Models: []string{"chat-model"}, Groups: []string{"default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{"chat-model": {InputPerMTok: 1, OutputPerMTok: 1}, "acme-v1": {PerCall: 0.1}}),
	)
	src, err := os.ReadFile("../task/testdata/pertask.js")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := g.Do(t, "POST", "/api/plugin/task", "root-secret", map[string]any{"source": string(src)}); code/100 != 2 {
		t.Fatalf("upload: %d %v", code, body)
	}
	if code, body := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
		"name": "acme", "type": "task_plugin", "base_url": redirect.URL, "key": "vendor-secret",
		"models": []string{"acme-v1"}, "settings": map[string]any{"task_plugin_key": "acme"}}); code != 200 {
		t.Fatalf("channel: %d %v", code, body)
	}
	cases := []struct {
		name string
		path string
		body map[string]any
	}{
		{"a relayed chat call", "/v1/chat/completions", map[string]any{"model": "chat-model",
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}}},
		{"a task submit", "/acme/v1/videos", map[string]any{"model": "acme-v1", "prompt": "a cat"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := internal.hits.Load()
			code, body := g.Do(t, "POST", tc.path, "sk-bob", tc.body)
			if code < 500 {
				t.Fatalf("a redirected upstream answered %d %v, want a gateway error", code, body)
			}
			if got := internal.hits.Load() - before; got != 0 {
				t.Fatalf("the redirect target received %d requests (%d with credentials)", got, internal.withCreds.Load())
			}
		})
	}
}
