package anthropic

import (
	"errors"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	goldenfile "github.com/turnpike-gw/turnpike/internal/protocol/golden"
)

func TestStreamDecoderTurnsAnErrorEventIntoAnIRError(t *testing.T) {
	raw := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{}}}\n\n" +
		"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"
	_, err := goldenfile.DecodeSSE([]byte(raw), Messages.NewStreamDecoder())
	var e *ir.Error
	if !errors.As(err, &e) || e.Status != 529 || e.Kind != ir.KindOverloaded || e.Retry != ir.RetryNext || e.Message != "Overloaded" {
		t.Fatalf("got %v", err)
	}
}

func TestStreamDecoderFinish(t *testing.T) {
	start := "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
	stop := "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":3}}\n\n"
	tests := []struct {
		name      string
		raw       string
		wantErr   bool
		wantTypes []ir.EventType
	}{
		{"cut off before a stop reason is an error", start, true, nil},
		{"stop reason without message_stop completes", start + stop, false, []ir.EventType{
			ir.EventStart, ir.EventBlockStart, ir.EventDelta, ir.EventBlockStop, ir.EventStop, ir.EventUsage, ir.EventDone}},
		{"message_stop without message_delta implies end", start + "data: {\"type\":\"message_stop\"}\n\n", false, []ir.EventType{
			ir.EventStart, ir.EventBlockStart, ir.EventDelta, ir.EventBlockStop, ir.EventStop, ir.EventDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := goldenfile.DecodeSSE([]byte(tt.raw), Messages.NewStreamDecoder())
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			var got []ir.EventType
			for _, ev := range evs {
				got = append(got, ev.Type)
			}
			if len(got) != len(tt.wantTypes) {
				t.Fatalf("types %v, want %v", got, tt.wantTypes)
			}
			for i := range got {
				if got[i] != tt.wantTypes[i] {
					t.Fatalf("types %v, want %v", got, tt.wantTypes)
				}
			}
		})
	}
}

func TestStreamDecoderRejectsMalformedAndUnboundedInput(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"invalid JSON", "data: {\"type\":\n\n"},
		{"block without index", "data: {\"type\":\"content_block_start\",\"content_block\":{\"type\":\"text\"}}\n\n"},
		{"block started twice", "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\"}}\n\n" +
			"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\"}}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := goldenfile.DecodeSSE([]byte(tt.raw), Messages.NewStreamDecoder()); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	t.Run("too many blocks", func(t *testing.T) {
		dec := Messages.NewStreamDecoder()
		emit := func(ir.Event) error { return nil }
		var err error
		for i := 0; i <= maxStreamBlocks && err == nil; i++ {
			err = dec.Decode("", []byte(`{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"text","text":""}}`), emit)
		}
		if err == nil {
			t.Fatal("want an error once the block cap is passed")
		}
	})
}

func TestStreamDecoderIgnoresUnknownEventsAndDeltas(t *testing.T) {
	raw := "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"stray\"}}\n\n" +
		"data: {\"type\":\"brand_new_event\"}\n\n" +
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":1}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n"
	evs, err := goldenfile.DecodeSSE([]byte(raw), Messages.NewStreamDecoder())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == ir.EventDelta {
			t.Errorf("unexpected delta %+v", ev)
		}
		if ev.Type == ir.EventStop && ev.StopReason != ir.StopContentFilter {
			t.Errorf("refusal mapped to %q", ev.StopReason)
		}
	}
}

func TestStreamEncoderInventsIDsAndEndsOnce(t *testing.T) {
	out := string(encodeEvents(t, []ir.Event{
		{Type: ir.EventBlockStart, Index: 0, Block: ir.BlockToolCall, ToolName: "f"},
		{Type: ir.EventDone},
		{Type: ir.EventDone},
	}))
	if !strings.Contains(out, `"id":"msg_`) || !strings.Contains(out, `"id":"toolu_`) {
		t.Errorf("missing generated ids:\n%s", out)
	}
	if n := strings.Count(out, "event: message_stop"); n != 1 {
		t.Errorf("message_stop written %d times", n)
	}
	if !strings.Contains(out, `"stop_reason":"end_turn"`) {
		t.Errorf("missing default stop reason:\n%s", out)
	}
}

func TestEncodeResponseFillsIDAndFixesArguments(t *testing.T) {
	out, err := Messages.EncodeResponse(&ir.Response{Content: []ir.Part{
		{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{Name: "f", Arguments: "not json"}},
		{Kind: ir.PartImage},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`"id":"msg_`, `"id":"toolu_`, `"input":{}`, `"stop_reason":"end_turn"`,
		`"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in %s", want, s)
		}
	}
	if strings.Contains(s, `"image"`) {
		t.Errorf("image part should be skipped: %s", s)
	}
}

func TestDecodeResponseRejectsNonJSONAndReadsErrorBodies(t *testing.T) {
	if _, err := Messages.DecodeResponse([]byte("<html>")); err == nil {
		t.Error("want error for HTML body")
	}
	_, err := Messages.DecodeResponse([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	var e *ir.Error
	if !errors.As(err, &e) || e.Kind != ir.KindOverloaded {
		t.Errorf("got %v", err)
	}
}

func TestThinkingBudgetForEffort(t *testing.T) {
	tests := map[string]int{"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384, "xhigh": 32768, "unusual": 4096, "none": 0}
	for effort, want := range tests {
		if got := thinkingBudget(&ir.Reasoning{Effort: effort}); got != want {
			t.Errorf("effort %q: budget %d, want %d", effort, got, want)
		}
	}
}
