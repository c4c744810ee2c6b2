package gemini

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

func eventTypes(evs []ir.Event) string {
	names := make([]string, len(evs))
	for i, ev := range evs {
		names[i] = eventNames[ev.Type]
	}
	return strings.Join(names, ",")
}

func TestStreamDecoderEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		chunks    []string
		wantTypes string
		wantErr   int // HTTP status of the expected *ir.Error, 0 for none
	}{
		{"empty stream is an upstream failure", nil, "", 502},
		{"blank events are ignored", []string{"", "  "}, "", 502},
		{"a stream cut off before its finish reason is an upstream failure",
			[]string{`{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}`},
			"start,block_start,delta", 502},
		{"blocked prompt stops with the content filter",
			[]string{`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`},
			"start,usage,stop,usage,done", 0},
		{"JSON-array framing is read chunk by chunk",
			[]string{`[{"candidates":[{"content":{"parts":[{"text":"a"}]}}]},{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}]}]`},
			"start,block_start,delta,delta,block_stop,stop,done", 0},
		{"error chunk mid-stream becomes an error",
			[]string{`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`},
			"start,block_start,delta", 503},
		{"garbage data is a bad upstream answer", []string{`{"candidates":`}, "", 502},
		{"parts after the finish reason are ignored",
			[]string{`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"MAX_TOKENS"}]}`, `{"candidates":[{"content":{"parts":[{"text":"late"}]}}]}`},
			"start,block_start,delta,block_stop,stop,done", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines [][]byte
			for _, c := range tt.chunks {
				lines = append(lines, []byte(c))
			}
			evs, err := decodeStream(lines)
			if tt.wantErr != 0 {
				if e := asIRError(t, err); e.Status != tt.wantErr {
					t.Errorf("status = %d, want %d", e.Status, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := eventTypes(evs); got != tt.wantTypes {
				t.Errorf("events = %s, want %s", got, tt.wantTypes)
			}
		})
	}
}

func TestStreamEncoderCapsBufferedToolArguments(t *testing.T) {
	enc := Generate.NewStreamEncoder(&sinkRecorder{}, protocol.StreamOptions{})
	_ = enc.Encode(ir.Event{Type: ir.EventStart})
	_ = enc.Encode(ir.Event{Type: ir.EventBlockStart, Block: ir.BlockToolCall, ToolCallID: "c", ToolName: "f"})
	chunk := strings.Repeat("a", 64<<10)
	var err error
	for i := 0; i < 20 && err == nil; i++ {
		err = enc.Encode(ir.Event{Type: ir.EventDelta, Block: ir.BlockToolCall, ArgumentsDelta: chunk})
	}
	if e := asIRError(t, err); e.Code != "tool_arguments_too_large" {
		t.Errorf("code = %s", e.Code)
	}
}

func TestStreamEncoderEndsWithoutExplicitStopOrUsage(t *testing.T) {
	sink := &sinkRecorder{}
	enc := Generate.NewStreamEncoder(sink, protocol.StreamOptions{})
	for _, ev := range []ir.Event{{Type: ir.EventStart, ID: "r", Model: "m"},
		{Type: ir.EventDelta, Block: ir.BlockText, Text: "x"}, {Type: ir.EventDone}, {Type: ir.EventDelta, Text: "after"}} {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"index":0}],"modelVersion":"m","responseId":"r"}
{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"modelVersion":"m","responseId":"r"}
`
	if got := string(sink.lines()); got != want {
		t.Errorf("got\n%s", got)
	}
}

func TestResponseStopReasons(t *testing.T) {
	tests := []struct {
		finish string
		called bool
		want   ir.StopReason
	}{
		{"STOP", false, ir.StopEnd},
		{"STOP", true, ir.StopToolUse},
		{"MAX_TOKENS", true, ir.StopMaxTokens},
		{"SAFETY", false, ir.StopContentFilter},
		{"RECITATION", false, ir.StopContentFilter},
		{"BLOCKLIST", false, ir.StopContentFilter},
		{"PROHIBITED_CONTENT", false, ir.StopContentFilter},
		{"SPII", false, ir.StopContentFilter},
		{"MALFORMED_FUNCTION_CALL", false, ir.StopError},
		{"OTHER", false, ir.StopEnd},
		{"", false, ir.StopEnd},
	}
	for _, tt := range tests {
		if got := stopReason(tt.finish, tt.called); got != tt.want {
			t.Errorf("stopReason(%q, %v) = %s, want %s", tt.finish, tt.called, got, tt.want)
		}
	}
}

func TestDecodeResponseFailsOnMalformedBodies(t *testing.T) {
	for _, body := range []string{``, `{"candidates": 5}`, `[`} {
		_, err := Generate.DecodeResponse([]byte(body))
		if e := asIRError(t, err); e.Status != 502 || e.Retry != ir.RetryNext {
			t.Errorf("%q: got %d retry=%d", body, e.Status, e.Retry)
		}
	}
}

func TestSniffUsage(t *testing.T) {
	want := ir.Usage{InputTokens: 4120, OutputTokens: 130, CacheReadTokens: 4096, ReasoningTokens: 121}
	body := readFile(t, "testdata/responses/usage_cached_thoughts.json")
	if got, ok := Generate.SniffUsage(body); !ok || got != want {
		t.Errorf("response: got %+v %v", got, ok)
	}
	array := []byte(`[{"usageMetadata":{"promptTokenCount":1}},{"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":2}}]`)
	if got, ok := Generate.SniffUsage(array); !ok || got != (ir.Usage{InputTokens: 9, OutputTokens: 2}) {
		t.Errorf("array: got %+v %v", got, ok)
	}
	if _, ok := Generate.SniffUsage([]byte(`{"candidates":[]}`)); ok {
		t.Error("reported usage for a body without any")
	}
	chunk := []byte(`{"candidates":[],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"thoughtsTokenCount":2}}`)
	if got, ok := Generate.SniffStreamUsage("", chunk); !ok || got != (ir.Usage{InputTokens: 5, OutputTokens: 3, ReasoningTokens: 2}) {
		t.Errorf("chunk: got %+v %v", got, ok)
	}
	if _, ok := Generate.SniffStreamUsage("", []byte(`{"candidates":[]}`)); ok {
		t.Error("reported usage for a chunk without any")
	}
}

func BenchmarkSniffStreamUsage(b *testing.B) {
	chunk := []byte(`{"candidates": [{"content": {"parts": [{"text": " quick brown fox"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 4,"totalTokenCount": 13},"modelVersion": "gemini-2.0-flash","responseId": "stream-1"}`)
	for b.Loop() {
		Generate.SniffStreamUsage("", chunk)
	}
}

// TestStreamEncoderPutsUsageOnAChunkWithContent keeps usage where clients
// read it: LangChain's Google client drops a chunk without
// candidates[0].content, usage included.
func TestStreamEncoderPutsUsageOnAChunkWithContent(t *testing.T) {
	sink := &sinkRecorder{}
	enc := Generate.NewStreamEncoder(sink, protocol.StreamOptions{})
	for _, ev := range []ir.Event{{Type: ir.EventStart, ID: "r", Model: "m"},
		{Type: ir.EventDelta, Block: ir.BlockText, Text: "x"}, {Type: ir.EventStop, StopReason: ir.StopEnd},
		{Type: ir.EventUsage, Usage: &ir.Usage{InputTokens: 3, OutputTokens: 1}}, {Type: ir.EventDone}} {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(sink.lines())), "\n") {
		if !gjson.Get(line, "usageMetadata").Exists() {
			continue
		}
		if !gjson.Get(line, "candidates.0.content.parts.0").Exists() || gjson.Get(line, "candidates.0.finishReason").String() != "STOP" {
			t.Fatalf("usage on a chunk without content and finishReason: %s", line)
		}
		if gjson.Get(line, "usageMetadata.promptTokenCount").Int() != 3 {
			t.Fatalf("usage lost: %s", line)
		}
		return
	}
	t.Fatal("no chunk carries usageMetadata")
}
