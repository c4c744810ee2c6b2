package relay

import (
	"strconv"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// failoverEnv has a model with stream_failover on two channels: first
// (tried first) and second.
func failoverEnv(t *testing.T, first, second *fakeOpenAI) (*env, *store.Channel, *store.Channel) {
	e := newEnv(t)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000, StreamFailover: true})
	a := e.channel("first", newFake(t, first).URL, func(c *store.Channel) { c.Priority = 10 })
	b := e.channel("second", newFake(t, second).URL, nil)
	return e, a, b
}

// A stream the upstream breaks after text was sent is continued by the
// next channel on the same client stream, which ends normally: one start,
// the text joined, billed once at the first model's price, the failover
// and both upstreams' cost on the row (CONTRACT §22).
func TestABrokenStreamIsContinuedOnTheNextChannel(t *testing.T) {
	cases := []struct {
		name, path, body, startMark, endMark string
	}{
		{"openai", "/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Tell me"}]}`,
			`"role":"assistant"`, "data: [DONE]"},
		{"messages", "/v1/messages", `{"model":"gpt-4o-mini","max_tokens":200,"stream":true,"messages":[{"role":"user","content":"Tell me"}]}`,
			"event: message_start", "event: message_stop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := &fakeOpenAI{text: "Once upon a time", breakOff: true}
			second := &fakeOpenAI{text: "upon a time there was"}
			e, a, b := failoverEnv(t, first, second)
			before := e.balance()
			resp, got := e.sendChat(tc.path, tc.body, nil)
			if resp.StatusCode != 200 || strings.Contains(got, `"error"`) || !strings.Contains(got, tc.endMark) {
				t.Fatalf("status %d, not a clean end:\n%s", resp.StatusCode, got)
			}
			if n := strings.Count(got, tc.startMark); n != 1 {
				t.Fatalf("%d starts, want one:\n%s", n, got)
			}
			if tc.name == "messages" && strings.Count(got, "event: content_block_start") != 1 {
				t.Fatalf("the continued text opened a second block:\n%s", got)
			}
			if first.calls() != 1 || second.calls() != 1 {
				t.Fatalf("calls %d / %d", first.calls(), second.calls())
			}
			msgs, _ := second.last()["messages"].([]any)
			if len(msgs) != 3 {
				t.Fatalf("continuation asked with %d messages: %v", len(msgs), msgs)
			}
			prefix, _ := msgs[1].(map[string]any)
			if prefix["role"] != "assistant" || prefix["content"] != "Once " {
				t.Fatalf("the delivered text is not the assistant's turn: %v", prefix)
			}
			row, other := e.lastConsume()
			fo, _ := other["failover"].(map[string]any)
			if fo == nil || fo["from"] != float64(a.ID) || fo["to"] != float64(b.ID) || fo["at_chars"] != float64(5) || other["incomplete"] != nil {
				t.Fatalf("row other %v", other)
			}
			wantOut := tokenize.Count("gpt-4o-mini", "Once upon a time there was")
			if row.ChannelID != a.ID || row.CompletionTokens != wantOut {
				t.Fatalf("row channel %d, %d output tokens; want %d, %d", row.ChannelID, row.CompletionTokens, a.ID, wantOut)
			}
			if charged := before - e.balance(); charged != int64(row.PromptTokens)*50+int64(wantOut)*500 {
				t.Fatalf("charged %d for %d/%d tokens", charged, row.PromptTokens, wantOut)
			}
			// The first upstream's part (the counted prompt in, "Once " out)
			// plus the second's reported 1000 in and 500 out, at list price.
			firstCost := float64(row.PromptTokens)*100/1e6 + float64(tokenize.Count("gpt-4o-mini", "Once "))*1000/1e6
			if got, want := other["upstream_cost_usd"], strconv.FormatFloat(firstCost+0.6, 'f', -1, 64); got != want {
				t.Fatalf("upstream cost %v, want %s", got, want)
			}
		})
	}
}

// Without stream_failover, or with a tool call under way, a break is the
// truncation error as before and no second channel is asked.
func TestNoFailoverWithoutTheOptionOrDuringAToolCall(t *testing.T) {
	first := &fakeOpenAI{text: "Once upon a time", breakOff: true}
	second := &fakeOpenAI{}
	e, _, _ := failoverEnv(t, first, second)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000})
	_, got := e.sendChat("/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`, nil)
	if !strings.Contains(got, `data: {"error":`) || second.calls() != 0 {
		t.Fatalf("second asked %d times:\n%s", second.calls(), got)
	}
	fo := newFailoverEncoder(nopEncoder{})
	_ = fo.Encode(toolStart)
	_ = fo.Encode(textDelta)
	if fo.resumable() {
		t.Fatal("an answer with a tool call under way was resumable")
	}
}

type nopEncoder struct{}

func (nopEncoder) Encode(ir.Event) error { return nil }

var (
	textDelta = ir.Event{Type: ir.EventDelta, Index: 0, Block: ir.BlockText, Text: "Let me look"}
	toolStart = ir.Event{Type: ir.EventBlockStart, Index: 1, Block: ir.BlockToolCall, ToolCallID: "c1", ToolName: "search"}
)
