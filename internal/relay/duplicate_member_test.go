package relay

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A body that names a member twice is refused before anything is reserved
// or sent, on every surface and in its dialect (CONTRACT §13): the gateway
// reads the first member and the upstream the last, so the upstream would
// serve a model, stream flag or limit nobody checked or billed.
func TestARepeatedMemberIsRefusedBeforeAnythingIsReserved(t *testing.T) {
	bearerHdr := map[string]string{"Authorization": "Bearer " + testKey}
	messagesHdr := map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01"}
	altHdr := map[string]string{"x-goog-api-key": testKey}
	cases := []struct {
		name, path, body string
		header           map[string]string
		// dialect is the path of the message in the error body; member is
		// what it must name.
		dialect, member string
	}{
		{"chat: the model smuggled", "/v1/chat/completions",
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"model":"o1-pro"}`, bearerHdr, "openai", "model"},
		{"chat: the model behind an escape", "/v1/chat/completions",
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"mod\u0065l":"o1-pro"}`, bearerHdr, "openai", "model"},
		{"chat: stream_options", "/v1/chat/completions",
			`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true,"include_usage":false},"messages":[{"role":"user","content":"Hi"}]}`,
			bearerHdr, "openai", "stream_options.include_usage"},
		{"chat: a tools entry", "/v1/chat/completions",
			`{"model":"gpt-4o-mini","tools":[{"type":"function","function":{"name":"a","name":"b"}}],"messages":[{"role":"user","content":"Hi"}]}`,
			bearerHdr, "openai", "tools[0].function.name"},
		{"messages: max_tokens", "/v1/messages",
			`{"model":"gpt-4o-mini","max_tokens":10,"messages":[{"role":"user","content":"Hi"}],"max_tokens":64000}`, messagesHdr, "messages", "max_tokens"},
		{"messages: thinking", "/v1/messages",
			`{"model":"gpt-4o-mini","max_tokens":10,"thinking":{"type":"enabled","budget_tokens":1024,"budget_tokens":60000},"messages":[{"role":"user","content":"Hi"}]}`,
			messagesHdr, "messages", "thinking.budget_tokens"},
		{"messages: metadata", "/v1/messages",
			`{"model":"gpt-4o-mini","max_tokens":10,"metadata":{"user_id":"a","user_id":"b"},"messages":[{"role":"user","content":"Hi"}]}`,
			messagesHdr, "messages", "metadata.user_id"},
		{"count_tokens", "/v1/messages/count_tokens",
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"model":"o1-pro"}`, messagesHdr, "messages", "model"},
		{"alternate-native: generationConfig", "/v1beta/models/gpt-4o-mini:generateContent",
			`{"contents":[{"parts":[{"text":"Hi"}]}],"generationConfig":{"maxOutputTokens":10,"maxOutputTokens":60000}}`, altHdr, "alt", "generationConfig.maxOutputTokens"},
		{"alternate-native: streamed", "/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse",
			`{"contents":[{"parts":[{"text":"Hi"}]}],"contents":[{"parts":[{"text":"Something else"}]}]}`, altHdr, "alt", "contents"},
		{"alternate-native: countTokens", "/v1beta/models/gpt-4o-mini:countTokens",
			`{"contents":[{"parts":[{"text":"Hi"}]}],"contents":[]}`, altHdr, "alt", "contents"},
		{"responses: reasoning", "/v1/responses",
			`{"model":"gpt-4o-mini","input":"Hi","reasoning":{"effort":"low","effort":"high"}}`, bearerHdr, "openai", "reasoning.effort"},
		{"responses: the model", "/v1/responses", `{"model":"gpt-4o-mini","input":"Hi","Model":"o1-pro"}`, bearerHdr, "openai", "Model"},
		{"embeddings", "/v1/embeddings", `{"model":"gpt-4o-mini","input":"Hi","model":"o1-pro"}`, bearerHdr, "openai", "model"},
		{"completions", "/v1/completions", `{"model":"gpt-4o-mini","prompt":"Hi","max_tokens":5,"max_tokens":50000}`, bearerHdr, "openai", "max_tokens"},
		{"alternate-native embedContent", "/v1beta/models/gpt-4o-mini:embedContent",
			`{"content":{"parts":[{"text":"Hi"}]},"content":{"parts":[{"text":"Other"}]}}`, altHdr, "alt", "content"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("o1-pro", store.ModelPrice{InputPerMTok: 150, OutputPerMTok: 600})
			up := &fakeOpenAI{}
			e.channel("main", newFake(t, up).URL, nil)
			before := e.balance()

			resp := e.request(tc.path, tc.header, tc.body)
			body := readAll(resp)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
			}
			msg := assertDialect(t, tc.dialect, body)
			if !strings.Contains(msg, `"`+tc.member+`"`) {
				t.Fatalf("the message %q does not name %q", msg, tc.member)
			}
			if n := up.calls(); n != 0 {
				t.Fatalf("the upstream was called %d times", n)
			}
			if e.balance() != before {
				t.Fatalf("balance moved %d → %d", before, e.balance())
			}
			if kinds, _ := e.ledgerKinds(); kinds[store.LedgerReserve] != 0 {
				t.Fatalf("ledger %v: something was reserved", kinds)
			}
		})
	}
}

// assertDialect checks the error body's shape for a dialect and returns
// its message.
func assertDialect(t *testing.T, dialect, body string) string {
	t.Helper()
	r := gjson.Parse(body)
	switch dialect {
	case "openai":
		if r.Get("error.type").Str != "invalid_request_error" || r.Get("error.code").Str != "duplicate_member" {
			t.Fatalf("not an OpenAI duplicate_member error: %s", body)
		}
		return r.Get("error.message").Str
	case "messages":
		if r.Get("type").Str != "error" || r.Get("error.type").Str != "invalid_request_error" {
			t.Fatalf("not a messages invalid_request_error: %s", body)
		}
		return r.Get("error.message").Str
	default:
		if r.Get("error.code").Int() != 400 || r.Get("error.status").Str != "INVALID_ARGUMENT" {
			t.Fatalf("not an alternate-native INVALID_ARGUMENT error: %s", body)
		}
		return r.Get("error.message").Str
	}
}

func TestTheEstimateRefusesARepeatedMember(t *testing.T) {
	e := newEnv(t)
	for name, body := range map[string]string{
		"in the envelope": `{"model":"gpt-4o-mini","format":"openai","model":"o1-pro","body":{"messages":[]}}`,
		"in the body":     `{"format":"messages","body":{"model":"gpt-4o-mini","max_tokens":1,"max_tokens":64000,"messages":[]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			resp := e.post("/api/pricing/estimate", testKey, body)
			got := readAll(resp)
			if resp.StatusCode != 400 || gjson.Get(got, "error.code").Str != "duplicate_member" {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
		})
	}
}
