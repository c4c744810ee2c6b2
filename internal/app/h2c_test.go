package app_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// protoProvider is an OpenAI-compatible upstream that records the HTTP
// major version of each chat call and answers it whole or streamed.
type protoProvider struct {
	*httptest.Server
	mu     sync.Mutex
	protos []int
}

// newProtoProvider serves HTTP/1 only, or with h2cOnly HTTP/2 without TLS
// only, so a call in the wrong protocol never reaches the handler.
func newProtoProvider(t *testing.T, h2cOnly bool) *protoProvider {
	p := &protoProvider{}
	p.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.protos = append(p.protos, r.ProtoMajor)
		p.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"pong\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	var protocols http.Protocols
	if h2cOnly {
		protocols.SetUnencryptedHTTP2(true)
	} else {
		protocols.SetHTTP1(true)
	}
	p.Config.Protocols = &protocols
	p.Start()
	t.Cleanup(p.Close)
	return p
}

func (p *protoProvider) take() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.protos
	p.protos = nil
	return out
}

// A channel with settings.http2 prior_knowledge reaches an upstream that
// speaks only HTTP/2 without TLS, whole and streamed; a channel without it
// goes on speaking HTTP/1.
func TestHTTP2PriorKnowledgeChannelSpeaksH2CAndOthersStayOnHTTP1(t *testing.T) {
	h2c, h1 := newProtoProvider(t, true), newProtoProvider(t, false)
	weight := 1
	g := testkit.Start(t,
		testkit.WithUsers(config.SeedUser{Username: "u", Password: "u-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "u", Key: "sk-h2c-user"}),
		testkit.WithChannels(
			config.SeedChannel{Name: "h2c", Type: "openai", BaseURL: h2c.URL, Key: "up", Models: []string{"h2c-model"},
				Groups: []string{"default"}, Weight: &weight, Settings: map[string]any{"http2": "prior_knowledge"}},
			config.SeedChannel{Name: "h1", Type: "openai", BaseURL: h1.URL, Key: "up", Models: []string{"h1-model"},
				Groups: []string{"default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{"h2c-model": {InputPerMTok: 1}, "h1-model": {InputPerMTok: 1}}),
	)
	cases := []struct {
		name     string
		model    string
		stream   bool
		up       *protoProvider
		wantHTTP int
	}{
		{"h2c channel, whole answer", "h2c-model", false, h2c, 2},
		{"h2c channel, streamed answer", "h2c-model", true, h2c, 2},
		{"default channel, whole answer", "h1-model", false, h1, 1},
		{"default channel, streamed answer", "h1-model", true, h1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := g.DoRaw(t, "POST", "/v1/chat/completions", "sk-h2c-user", map[string]any{"model": tc.model, "stream": tc.stream,
				"messages": []map[string]any{{"role": "user", "content": "hi"}}})
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(raw), "pong") {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			if got := tc.up.take(); len(got) != 1 || got[0] != tc.wantHTTP {
				t.Fatalf("upstream saw protocol versions %v, want [%d]", got, tc.wantHTTP)
			}
		})
	}
}
