package relay

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const countBody = `{"model":"claude-x","system":"be brief","messages":[{"role":"user","content":"How many tokens is this sentence?"}]}`

func TestCountTokensGoesToAMessagesChannelAndIsNotBilled(t *testing.T) {
	e := newEnv(t)
	e.price("claude-x", store.ModelPrice{InputPerMTok: 3, OutputPerMTok: 15})
	var seen atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		seen.Store(fmt.Sprintf("%s %s %s %s", r.URL.Path, r.Header.Get("x-api-key"), r.Header.Get("anthropic-version"), raw))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":4242}`)
	}))
	t.Cleanup(srv.Close)
	e.channel("claude", srv.URL, func(c *store.Channel) {
		c.Type, c.Models, c.ModelMapping = 14, []string{"claude-x"}, map[string]string{"claude-x": "claude-x-2025"}
		c.Settings = map[string]any{"key_selection": "round_robin"}
		c.Key = "upstream-secret-claude\nupstream-secret-claude"
	})
	before := e.balance()
	resp := e.post("/v1/messages/count_tokens", testKey, countBody)
	var out struct {
		InputTokens int `json:"input_tokens"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 || out.InputTokens != 4242 {
		t.Fatalf("status %d, tokens %d", resp.StatusCode, out.InputTokens)
	}
	got, _ := seen.Load().(string)
	want := `/v1/messages/count_tokens upstream-secret-claude 2023-06-01 {"model":"claude-x-2025",`
	if len(got) < len(want) || got[:len(want)] != want {
		t.Fatalf("upstream saw %q", got)
	}
	e.flush()
	if e.balance() != before {
		t.Fatalf("count_tokens was billed: %d → %d", before, e.balance())
	}
}

func TestCountTokensIsCountedLocallyOffTheMessagesWire(t *testing.T) {
	cases := []struct {
		name    string
		channel func(url string) func(*store.Channel)
		status  int
	}{
		{"openai channel", func(string) func(*store.Channel) {
			return func(c *store.Channel) { c.Models = []string{"claude-x"} }
		}, 0},
		{"messages channel failing with 500", func(string) func(*store.Channel) {
			return func(c *store.Channel) { c.Type, c.Models = 14, []string{"claude-x"} }
		}, 500},
		{"messages channel refusing the gateway's key", func(string) func(*store.Channel) {
			return func(c *store.Channel) { c.Type, c.Models = 14, []string{"claude-x"} }
		}, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.WriteHeader(tc.status)
			}))
			t.Cleanup(srv.Close)
			e.channel("c", srv.URL, tc.channel(srv.URL))
			resp := e.post("/v1/messages/count_tokens", testKey, countBody)
			var out struct {
				InputTokens int `json:"input_tokens"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != 200 || out.InputTokens <= 5 || out.InputTokens > 40 {
				t.Fatalf("status %d, tokens %d", resp.StatusCode, out.InputTokens)
			}
			if tc.status == 0 && calls.Load() != 0 {
				t.Fatal("an OpenAI channel was asked to count")
			}
		})
	}
}

func TestCountTokensRefusesBadRequestsInTheMessagesDialect(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, key, body string
		status          int
	}{
		{"no key", "", countBody, 401},
		{"no model", testKey, `{"messages":[{"role":"user","content":"x"}]}`, 400},
		{"no messages", testKey, `{"model":"claude-x"}`, 400},
		{"not json", testKey, `{`, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.post("/v1/messages/count_tokens", tc.key, tc.body)
			var out struct {
				Type  string `json:"type"`
				Error struct {
					Type string `json:"type"`
				} `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != tc.status || out.Type != "error" || out.Error.Type == "" {
				t.Fatalf("status %d, body %+v", resp.StatusCode, out)
			}
		})
	}
}

// Token counting checks the model like every call: a model no channel of
// the key's group serves is refused, in each surface's dialect, rather than
// counted.
func TestCountTokensRefusesAModelTheKeysGroupIsNotServed(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, path, body, want string
		header                 map[string]string
	}{
		{"messages", "/v1/messages/count_tokens", `{"model":"no-such-model","messages":[{"role":"user","content":"x"}]}`,
			`"not_found_error"`, map[string]string{"x-api-key": testKey}},
		{"alternate-native", "/v1beta/models/no-such-model:countTokens", `{"contents":[{"parts":[{"text":"x"}]}]}`,
			`"NOT_FOUND"`, map[string]string{"x-goog-api-key": testKey}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.request(tc.path, tc.header, tc.body)
			body := readAll(resp)
			if resp.StatusCode != 404 || !strings.Contains(body, tc.want) {
				t.Fatalf("status %d body %s", resp.StatusCode, body)
			}
		})
	}
}

// A provider that refuses to count is judged by channel health under the
// channel's policy, like any attempt: the channel's trouble is counted
// locally, the request's own fault goes back to the client.
func TestCountTokensFailuresReachChannelHealthByTheChannelsPolicy(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		settings   map[string]any
		wantState  string
		wantClient int
	}{
		{"a refused key is disabled and the gateway counts", 401, nil, routing.StateAutoDisabled, 200},
		{"a throttle cools the key and the gateway counts", 429, nil, routing.StateCooling, 200},
		{"a malformed request is the client's answer", 400, nil, routing.StateHealthy, 400},
		{"a status the channel disables on is the channel's", 400, map[string]any{"disable_statuses": []any{400.0}}, routing.StateAutoDisabled, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("claude-x", store.ModelPrice{InputPerMTok: 3, OutputPerMTok: 15})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"no"}}`)
			}))
			t.Cleanup(srv.Close)
			ch := e.channel("claude", srv.URL, func(c *store.Channel) {
				c.Type, c.Models = 14, []string{"claude-x"}
				c.Settings = tc.settings
			})
			resp := e.post("/v1/messages/count_tokens", testKey, countBody)
			readAll(resp)
			if resp.StatusCode != tc.wantClient {
				t.Errorf("client got %d, want %d", resp.StatusCode, tc.wantClient)
			}
			if got := e.relay.Router.Health.Status(ch.ID, 0).State; got != tc.wantState {
				t.Errorf("channel health %s, want %s", got, tc.wantState)
			}
		})
	}
}
