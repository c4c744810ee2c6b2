package plugin

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A plugin listing a chat provider's type gets its channels, and so their
// keys, only with the administrator's consent (SECURITY.md, "Chat keys
// stay with chat").
func TestLegacyTypesWithAChatAdapterNeedConsentToBind(t *testing.T) {
	const plugin = "acme-video"
	models := []string{"acme-v1"}
	cases := []struct {
		name string
		c    store.Channel
		want bool
	}{
		{"an Ali chat channel", store.Channel{Type: 17, Models: []string{"qwen-max"}}, false},
		{"a MiniMax chat channel", store.Channel{Type: 35, Models: []string{"abab6.5"}}, false},
		{"an OpenAI chat channel", store.Channel{Type: 1, Models: []string{"gpt-4o"}}, false},
		{"a MiniMax channel without models", store.Channel{Type: 35}, false},
		{"a MiniMax channel naming the plugin", store.Channel{Type: 35, Models: []string{"abab6.5"},
			Settings: map[string]any{"task_plugin_key": plugin}}, true},
		{"an Ali channel serving only the plugin's models", store.Channel{Type: 17, Models: models}, true},
		{"a task vendor's channel", store.Channel{Type: 50, Models: []string{"kling-v1"}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			owned := []int{tc.c.Type}
			if got := bindsKey(&tc.c, plugin, owned, models); got != tc.want {
				t.Fatalf("bindsKey = %v, want %v", got, tc.want)
			}
		})
	}
}
