package app_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// keyRecorder is a vendor that accepts every submit and remembers which
// channel keys reached it.
type keyRecorder struct {
	mu   sync.Mutex
	keys []string
}

func (k *keyRecorder) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.keys = append(k.keys, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"job-1"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (k *keyRecorder) saw(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, got := range k.keys {
		if got == key {
			return true
		}
	}
	return false
}

// A plugin may list chat provider types in channelTypes (published plugins
// do), but it is only handed such a channel, and so its key, when the
// channel names the plugin; task vendor types bind as before.
func TestPluginsGetChatChannelKeysOnlyWhenTheChannelConsents(t *testing.T) {
	var vendor keyRecorder
	vsrv := vendor.server(t)
	src, err := os.ReadFile("../task/testdata/pertask.js")
	if err != nil {
		t.Fatal(err)
	}
	claiming := strings.Replace(string(src), `fetchMode: "per_task",`, `fetchMode: "per_task",
  channelTypes: [1, 14, 24, 50],`, 1)
	cases := []struct {
		name        string
		channelType string
		settings    map[string]any
		wantKey     bool
	}{
		{"an openai channel without consent", "openai", nil, false},
		{"an anthropic channel without consent", "anthropic", map[string]any{}, false},
		{"a gemini channel naming another plugin", "gemini", map[string]any{"task_plugin_key": "other"}, false},
		{"an openai channel naming the plugin", "openai", map[string]any{"task_plugin_key": "acme"}, true},
		{"a task vendor type needs no consent", "kling", nil, true},
	}
	prices := map[string]config.SeedPrice{}
	for i := range cases {
		prices[fmt.Sprintf("model-%d", i)] = config.SeedPrice{PerCall: 0.01}
	}
	g := testkit.Start(t,
		testkit.WithRootToken("root-secret"),
		testkit.WithUsers(config.SeedUser{Username: "bob", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "bob", Key: "sk-bob"}),
		testkit.WithModels(prices),
	)
	if code, body := g.Do(t, "POST", "/api/plugin/task", "root-secret", map[string]any{"source": claiming}); code/100 != 2 {
		t.Fatalf("a plugin listing chat types must still upload: %d %v", code, body)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model, key := fmt.Sprintf("model-%d", i), fmt.Sprintf("channel-key-%d", i)
			ch := map[string]any{"name": model, "type": tc.channelType, "base_url": vsrv.URL, "key": key, "models": []string{model}}
			if tc.settings != nil {
				ch["settings"] = tc.settings
			}
			if code, body := g.Do(t, "POST", "/api/channels", "root-secret", ch); code != 200 {
				t.Fatalf("channel: %d %v", code, body)
			}
			code, body := g.Do(t, "POST", "/acme/v1/videos", "sk-bob", map[string]any{"model": model, "prompt": "a cat"})
			if got := vendor.saw(key); got != tc.wantKey {
				t.Fatalf("the channel key reached the plugin's vendor: %v, want %v (answer %d %v)", got, tc.wantKey, code, body)
			}
			if !tc.wantKey && (code < 400 || strings.Contains(fmt.Sprint(body), key)) {
				t.Fatalf("a refused binding answered %d %v", code, body)
			}
		})
	}
}
