package relay

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// A Responses stream the upstream breaks after the first byte never ends
// cleanly, whether a channel speaking the Responses API served it (its
// events passed through, then the error event) or a chat or messages
// channel it was converted from (the items so far, then response.failed
// with the reason): the row says incomplete and the delivered output is
// billed (CONTRACT §22).
func TestATruncatedResponsesStreamEndsWithTheResponsesErrorEvent(t *testing.T) {
	cases := []struct {
		upstream  string
		settings  map[string]any
		errorMark string
	}{
		{"responses", nil, "event: error\ndata: {\"type\":\"error\",\"code\":\"stream_broken\""},
		{"openai", map[string]any{"responses": "chat"}, "event: response.failed\n"},
		{"anthropic", nil, "event: response.failed\n"},
		{"gemini", nil, "event: response.failed\n"},
	}
	for _, how := range []string{"eof", "reset"} {
		for _, tc := range cases {
			t.Run(how+" "+tc.upstream+" upstream", func(t *testing.T) {
				e := newEnv(t)
				e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000})
				e.channel("up", cutUpstream(t, tc.upstream, how).URL, func(c *store.Channel) {
					c.Type, c.Settings = pacedChannelTypes[tc.upstream], tc.settings
				})
				before := e.balance()
				resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Say three pieces","stream":true}`)
				got := readAll(resp)
				if resp.StatusCode != 200 || !strings.Contains(got, pacedPiece(2)) || !strings.Contains(got, tc.errorMark) ||
					strings.Contains(got, "response.completed") {
					t.Fatalf("status %d, want the pieces, then %q and no response.completed:\n%s", resp.StatusCode, tc.errorMark, got)
				}
				last := gjson.Parse(got[strings.LastIndex(got, "data: ")+6:])
				if msg := last.Get("response.error.message").String() + last.Get("message").String(); !strings.Contains(msg, "broke off") {
					t.Fatalf("the last event does not say why: %s", last.Raw)
				}
				wantOut := tokenize.Count("gpt-4o-mini", pacedPiece(0)+pacedPiece(1)+pacedPiece(2))
				row, other := e.lastConsume()
				if other["incomplete"] != true || row.CompletionTokens < wantOut || row.PromptTokens == 0 {
					t.Fatalf("row %d/%d tokens, other %v; want at least %d out and incomplete", row.PromptTokens, row.CompletionTokens, other, wantOut)
				}
				if charged, want := before-e.balance(), int64(row.PromptTokens)*50+int64(row.CompletionTokens)*500; charged != want {
					t.Fatalf("charged %d, want %d", charged, want)
				}
			})
		}
	}
}

// With stream_failover, a Responses stream converted from a chat channel
// that breaks after text was sent is continued on the next chat channel:
// one response.created, the text joined in one message item, a clean
// response.completed, billed once, the failover on the row.
func TestABrokenConvertedResponsesStreamIsContinuedOnTheNextChannel(t *testing.T) {
	first := &fakeOpenAI{text: "Once upon a time", breakOff: true}
	second := &fakeOpenAI{text: "upon a time there was"}
	e := newEnv(t)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000, StreamFailover: true})
	chat := map[string]any{"responses": "chat"}
	a := e.channel("first", newFake(t, first).URL, func(c *store.Channel) { c.Priority, c.Settings = 10, chat })
	b := e.channel("second", newFake(t, second).URL, func(c *store.Channel) { c.Settings = chat })
	before := e.balance()
	resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Tell me","stream":true}`)
	got := readAll(resp)
	names := sseEventNames(got)
	if resp.StatusCode != 200 || strings.Contains(got, "response.failed") || len(names) == 0 || names[len(names)-1] != "response.completed" {
		t.Fatalf("status %d, not a clean end:\n%s", resp.StatusCode, got)
	}
	if strings.Count(got, "event: response.created") != 1 || strings.Count(got, "event: response.output_item.added") != 1 {
		t.Fatalf("the continuation opened a second response or item:\n%s", got)
	}
	final := gjson.Parse(got[strings.LastIndex(got, "data: ")+6:])
	if text := final.Get("response.output.0.content.0.text").String(); text != "Once upon a time there was" {
		t.Fatalf("final text %q", text)
	}
	if first.calls() != 1 || second.calls() != 1 {
		t.Fatalf("calls %d / %d", first.calls(), second.calls())
	}
	msgs, _ := second.last()["messages"].([]any)
	prefix, _ := msgs[len(msgs)-2].(map[string]any)
	if prefix["role"] != "assistant" || prefix["content"] != "Once " {
		t.Fatalf("the delivered text is not the assistant's turn: %v", msgs)
	}
	row, other := e.lastConsume()
	fo, _ := other["failover"].(map[string]any)
	if fo == nil || fo["from"] != float64(a.ID) || fo["to"] != float64(b.ID) || fo["at_chars"] != float64(5) || other["incomplete"] != nil {
		t.Fatalf("row other %v", other)
	}
	wantOut := tokenize.Count("gpt-4o-mini", "Once upon a time there was")
	if row.ChannelID != a.ID || row.CompletionTokens != wantOut || other["upstream_cost_usd"] == nil {
		t.Fatalf("row channel %d, %d output tokens, other %v; want %d, %d", row.ChannelID, row.CompletionTokens, other, a.ID, wantOut)
	}
	if charged := before - e.balance(); charged != int64(row.PromptTokens)*50+int64(wantOut)*500 {
		t.Fatalf("charged %d for %d/%d tokens", charged, row.PromptTokens, wantOut)
	}
}
