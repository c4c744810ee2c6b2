package admin

import (
	"fmt"
	"strings"
	"testing"
)

// A base_url given as a full endpoint would get the endpoint appended a
// second time: it is refused, naming the base address to give instead.
func TestAChannelBaseURLWithAFullEndpointPathIsRefusedNamingTheBase(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		url, base string // base "" when the address is accepted
	}{
		{"https://api.openai.com/v1/chat/completions", "https://api.openai.com"},
		{"https://api.openai.com/v1/chat/completions/", "https://api.openai.com"},
		{"https://api.anthropic.com/v1/messages", "https://api.anthropic.com"},
		{"https://gw.example.com/openai/v1/embeddings", "https://gw.example.com/openai"},
		{"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent", "https://generativelanguage.googleapis.com"},
		{"https://api.openai.com", ""},
		{"https://api.openai.com/v1", ""},
		{"https://openrouter.ai/api/v1", ""},
	}
	for i, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			body := fmt.Sprintf(`{"name":"c%d","type":"openai","base_url":%q,"key":"sk-x"}`, i, tc.url)
			r := e.do("admin", "POST", "/api/channels", body)
			if tc.base == "" {
				if r.status != 200 {
					t.Fatalf("a base address refused: %d %s", r.status, r.raw)
				}
				return
			}
			msg, _ := r.body["error"].(map[string]any)["message"].(string)
			if r.status != 400 || !strings.Contains(msg, "base_url") || !strings.Contains(msg, tc.base+" ") {
				t.Fatalf("%d %s; want 400 naming %s", r.status, r.raw, tc.base)
			}
		})
	}
}
