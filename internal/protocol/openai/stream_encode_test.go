package openai

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// recordSink keeps each event's data.
type recordSink struct {
	data []string
	err  error
}

func (s *recordSink) Event(name string, data []byte) error {
	if name != "" {
		return errors.New("chat chunks have no event name")
	}
	s.data = append(s.data, string(data))
	return s.err
}

func encodeEvents(t *testing.T, opts ChatStreamOptions, evs ...ir.Event) []string {
	t.Helper()
	sink := &recordSink{}
	enc := NewChatStreamEncoderWith(sink, opts)
	enc.(*chatStreamEncoder).now = func() time.Time { return time.Unix(1700000000, 0) }
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			t.Fatalf("Encode: %v", err)
		}
	}
	for _, d := range sink.data {
		if d != "[DONE]" && !gjson.Valid(d) {
			t.Fatalf("chunk is not JSON: %s", d)
		}
	}
	return sink.data
}

// deltas renders each chunk as its delta, finish reason or usage, for
// comparing sequences.
func deltas(chunks []string) []string {
	var out []string
	for _, c := range chunks {
		switch {
		case c == "[DONE]":
			out = append(out, "[DONE]")
		case gjson.Get(c, "choices.#").Int() == 0:
			out = append(out, "usage "+gjson.Get(c, "usage.prompt_tokens").Raw+"/"+gjson.Get(c, "usage.completion_tokens").Raw)
		case gjson.Get(c, "choices.0.finish_reason").Type == gjson.String:
			out = append(out, "finish "+gjson.Get(c, "choices.0.finish_reason").Str)
		default:
			out = append(out, gjson.Get(c, "choices.0.delta").Raw)
		}
	}
	return out
}

func ev(typ ir.EventType, idx int, block ir.BlockKind) ir.Event {
	return ir.Event{Type: typ, Index: idx, Block: block}
}

func TestStreamEncoderSequences(t *testing.T) {
	start := ir.Event{Type: ir.EventStart, ID: "chatcmpl-x", Model: "m"}
	text := func(i int, s string) ir.Event {
		return ir.Event{Type: ir.EventDelta, Index: i, Block: ir.BlockText, Text: s}
	}
	usage := func(in, out int) ir.Event {
		return ir.Event{Type: ir.EventUsage, Usage: &ir.Usage{InputTokens: in, OutputTokens: out}}
	}
	stop := func(r ir.StopReason) ir.Event { return ir.Event{Type: ir.EventStop, StopReason: r} }
	done := ir.Event{Type: ir.EventDone}
	tests := []struct {
		name string
		opts ChatStreamOptions
		evs  []ir.Event
		want []string
	}{
		{"usage before stop still comes last", ChatStreamOptions{IncludeUsage: true},
			[]ir.Event{start, usage(5, 0), ev(ir.EventBlockStart, 0, ir.BlockText), text(0, "a"), stop(ir.StopEnd), usage(0, 2), done},
			[]string{`{"role":"assistant","content":""}`, `{"content":"a"}`, "finish stop", "usage 5/2", "[DONE]"}},
		{"no usage chunk unless asked", ChatStreamOptions{},
			[]ir.Event{start, ev(ir.EventBlockStart, 0, ir.BlockText), text(0, "a"), stop(ir.StopMaxTokens), usage(5, 2), done},
			[]string{`{"role":"assistant","content":""}`, `{"content":"a"}`, "finish length", "[DONE]"}},
		{"no usage chunk when usage never came", ChatStreamOptions{IncludeUsage: true},
			[]ir.Event{start, stop(ir.StopEnd), done},
			[]string{`{"role":"assistant","content":""}`, "finish stop", "[DONE]"}},
		{"missing Start and Stop are supplied", ChatStreamOptions{},
			[]ir.Event{text(0, "a"), done},
			[]string{`{"role":"assistant","content":""}`, `{"content":"a"}`, "finish stop", "[DONE]"}},
		{"tool indexes count tool calls only, blocks never closed", ChatStreamOptions{},
			[]ir.Event{start, ev(ir.EventBlockStart, 0, ir.BlockThinking), {Type: ir.EventDelta, Index: 0, Block: ir.BlockThinking, Text: "hm"},
				{Type: ir.EventDelta, Index: 0, Block: ir.BlockThinking, Signature: "sig"},
				{Type: ir.EventBlockStart, Index: 1, Block: ir.BlockToolCall, ToolCallID: "toolu_1", ToolName: "f"},
				{Type: ir.EventDelta, Index: 1, Block: ir.BlockToolCall, ArgumentsDelta: `{"a":`},
				{Type: ir.EventDelta, Index: 1, Block: ir.BlockToolCall, ArgumentsDelta: `1}`},
				{Type: ir.EventBlockStart, Index: 2, Block: ir.BlockToolCall, ToolCallID: "toolu_2", ToolName: "g"},
				stop(ir.StopToolUse), done},
			[]string{`{"role":"assistant","content":""}`, `{"reasoning_content":"hm"}`,
				`{"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"f","arguments":""}}]}`,
				`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}`,
				`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`,
				`{"tool_calls":[{"index":1,"id":"toolu_2","type":"function","function":{"name":"g","arguments":""}}]}`,
				"finish tool_calls", "[DONE]"}},
		{"events after Done and repeated stops are ignored", ChatStreamOptions{},
			[]ir.Event{start, stop(ir.StopEnd), stop(ir.StopMaxTokens), done, text(0, "late"), done},
			[]string{`{"role":"assistant","content":""}`, "finish stop", "[DONE]"}},
		{"content after Stop is dropped", ChatStreamOptions{},
			[]ir.Event{start, stop(ir.StopEnd), ev(ir.EventBlockStart, 0, ir.BlockText), text(0, "late"),
				{Type: ir.EventBlockStart, Index: 1, Block: ir.BlockToolCall, ToolCallID: "c", ToolName: "f"}, done},
			[]string{`{"role":"assistant","content":""}`, "finish stop", "[DONE]"}},
		{"pings and empty text write nothing", ChatStreamOptions{},
			[]ir.Event{start, {Type: ir.EventPing}, ev(ir.EventBlockStart, 0, ir.BlockText), text(0, ""), ev(ir.EventBlockStop, 0, ir.BlockText), stop(ir.StopEnd), done},
			[]string{`{"role":"assistant","content":""}`, "finish stop", "[DONE]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deltas(encodeEvents(t, tt.opts, tt.evs...))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestStreamEncoderChunksShareIdentity(t *testing.T) {
	chunks := encodeEvents(t, ChatStreamOptions{IncludeUsage: true},
		ir.Event{Type: ir.EventStart, ID: "chatcmpl-same", Model: "gpt-x"},
		ir.Event{Type: ir.EventDelta, Index: 0, Block: ir.BlockText, Text: "line\n\"quoted\" \u2028 <b>"},
		ir.Event{Type: ir.EventUsage, Usage: &ir.Usage{InputTokens: 1, OutputTokens: 1}},
		ir.Event{Type: ir.EventDone})
	for _, c := range chunks[:len(chunks)-1] {
		if gjson.Get(c, "id").Str != "chatcmpl-same" || gjson.Get(c, "model").Str != "gpt-x" ||
			gjson.Get(c, "created").Int() != 1700000000 || gjson.Get(c, "object").Str != "chat.completion.chunk" {
			t.Errorf("chunk identity differs: %s", c)
		}
	}
	if got := gjson.Get(chunks[1], "choices.0.delta.content").Str; got != "line\n\"quoted\" \u2028 <b>" {
		t.Errorf("content round trip = %q", got)
	}
	if gjson.Get(chunks[1], "usage").Type != gjson.Null || !gjson.Get(chunks[1], "usage").Exists() {
		t.Errorf("include_usage chunks must carry usage null: %s", chunks[1])
	}
}

func TestStreamEncoderGeneratesIDWhenStartHasNone(t *testing.T) {
	chunks := encodeEvents(t, ChatStreamOptions{}, ir.Event{Type: ir.EventStart}, ir.Event{Type: ir.EventDone})
	if id := gjson.Get(chunks[0], "id").Str; !strings.HasPrefix(id, "chatcmpl-") || len(id) < 20 {
		t.Errorf("id = %q", id)
	}
}

func TestStreamEncoderReturnsSinkErrors(t *testing.T) {
	boom := errors.New("write failed")
	enc := NewChatStreamEncoderWith(&recordSink{err: boom}, ChatStreamOptions{})
	if err := enc.Encode(ir.Event{Type: ir.EventStart, ID: "x"}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the sink error", err)
	}
}

func TestDefaultStreamEncoderIncludesUsage(t *testing.T) {
	sink := &recordSink{}
	enc := Chat.NewStreamEncoder(sink, protocol.StreamOptions{IncludeUsage: true})
	for _, e := range []ir.Event{{Type: ir.EventStart, ID: "x"}, {Type: ir.EventUsage, Usage: &ir.Usage{InputTokens: 2}}, {Type: ir.EventDone}} {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(sink.data); n < 2 || gjson.Get(sink.data[n-2], "usage.prompt_tokens").Int() != 2 {
		t.Errorf("no usage chunk before [DONE]: %q", sink.data)
	}
}
