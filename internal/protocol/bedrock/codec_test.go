package bedrock

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

func intp(v int) *int { return &v }

func userText(s string) ir.Message {
	return ir.Message{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: s}}}
}

// Fields Converse cannot express are refused with a 400 naming them, never
// dropped where dropping would change what is asked.
func TestEncodeRequestRefusesWhatConverseCannotExpressNamingTheField(t *testing.T) {
	call := ir.Message{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "f", Arguments: "{}"}}}}
	result := ir.Message{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "c1", Content: []ir.Part{{Kind: ir.PartText, Text: "ok"}}}}}}
	tools := []ir.Tool{{Name: "f"}}
	cases := []struct {
		name  string
		req   ir.Request
		param string
	}{
		{"several answers", ir.Request{N: intp(2), Messages: []ir.Message{userText("hi")}}, "n"},
		{"a JSON schema answer", ir.Request{ResponseFormat: &ir.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{}`)}, Messages: []ir.Message{userText("hi")}}, "response_format"},
		{"an image by web address", ir.Request{Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartImage, Media: &ir.Media{URL: "https://example.com/a.png"}}}}}}, "messages[0].content[0].url"},
		{"an image type Bedrock does not take", ir.Request{Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartImage, Media: &ir.Media{MIMEType: "image/tiff", Data: "AAAA"}}}}}}, "messages[0].content[0]"},
		{"tool_choice none after tool calls", ir.Request{Tools: tools, ToolChoice: &ir.ToolChoice{Mode: ir.ToolChoiceNone}, Messages: []ir.Message{userText("hi"), call, result}}, "tool_choice"},
		{"a provider's own tool", ir.Request{Tools: []ir.Tool{{Name: "web_search", Native: json.RawMessage(`{"type":"web_search_20250305"}`)}}, Messages: []ir.Message{userText("hi")}}, "tools[0]"},
		{"tool arguments that are not an object", ir.Request{Messages: []ir.Message{userText("hi"), {Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c", Name: "f", Arguments: "[1]"}}}}}}, "messages[1].content[0].arguments"},
		{"no messages", ir.Request{Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText}}}}}, "messages"},
		{"max_tokens below one", ir.Request{MaxTokens: intp(0), Messages: []ir.Message{userText("hi")}}, "max_tokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Converse.EncodeRequest(&tc.req)
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Param != tc.param {
				t.Fatalf("got %v (param %q), want a 400 naming %q", err, paramOf(err), tc.param)
			}
		})
	}
}

func paramOf(err error) string {
	var e *ir.Error
	if errors.As(err, &e) {
		return e.Param
	}
	return ""
}

// tool_choice none without tool history sends no tools at all, the one way
// Converse can keep the model from calling them.
func TestToolChoiceNoneSendsNoTools(t *testing.T) {
	out, err := Converse.EncodeRequest(&ir.Request{Tools: []ir.Tool{{Name: "f"}}, ToolChoice: &ir.ToolChoice{Mode: ir.ToolChoiceNone}, Messages: []ir.Message{userText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if gjson.GetBytes(out, "toolConfig").Exists() {
		t.Fatalf("toolConfig sent: %s", out)
	}
}

// Consecutive turns of one role merge (Converse requires alternation), and
// a required tool choice is "any".
func TestTurnsAlternateAndRequiredToolIsAny(t *testing.T) {
	out, err := Converse.EncodeRequest(&ir.Request{
		Tools: []ir.Tool{{Name: "f"}}, ToolChoice: &ir.ToolChoice{Mode: ir.ToolChoiceRequired},
		Messages: []ir.Message{userText("a"), userText("b"), {Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartText, Text: "c"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := gjson.GetBytes(out, "messages.#").Int(); n != 2 {
		t.Fatalf("%d turns, want 2: %s", n, out)
	}
	if got := gjson.GetBytes(out, "messages.0.content.#.text").Raw; got != `["a","b"]` {
		t.Fatalf("merged user turn %s", got)
	}
	if !gjson.GetBytes(out, "toolConfig.toolChoice.any").IsObject() {
		t.Fatalf("toolChoice %s", gjson.GetBytes(out, "toolConfig.toolChoice").Raw)
	}
}

// Tool ids from other formats become ids Converse accepts, the same for a
// call and its result, and at most 64 characters.
func TestToolIDsAreMadeAcceptableDeterministically(t *testing.T) {
	long := strings.Repeat("x.", 60)
	for _, id := range []string{"call_ok-1", "call.1/a", long} {
		got := toolID(id)
		if got != toolID(id) || len(got) > 64 || len(got) == 0 {
			t.Fatalf("toolID(%q) = %q", id, got)
		}
		for _, c := range got {
			if !(c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
				t.Fatalf("toolID(%q) = %q holds %q", id, got, c)
			}
		}
	}
	if toolID(long) == toolID(strings.Repeat("x.", 61)) {
		t.Fatal("two long ids collide")
	}
}

func TestStopReasonsMapToTheIR(t *testing.T) {
	cases := map[string]ir.StopReason{
		"end_turn": ir.StopEnd, "tool_use": ir.StopToolUse, "max_tokens": ir.StopMaxTokens,
		"stop_sequence": ir.StopSequence, "guardrail_intervened": ir.StopContentFilter,
		"content_filtered": ir.StopContentFilter, "model_context_window_exceeded": ir.StopMaxTokens,
		"malformed_tool_use": ir.StopError, "something_new": ir.StopEnd,
	}
	for wire, want := range cases {
		if got := stopFromWire(wire); got != want {
			t.Errorf("%s → %s, want %s", wire, got, want)
		}
	}
}

// Usage from a hostile upstream never goes negative.
func TestUsageIsNeverNegative(t *testing.T) {
	resp, err := Converse.DecodeResponse([]byte(`{"output":{"message":{"content":[]}},"usage":{"inputTokens":-5,"outputTokens":-1,"cacheReadInputTokens":-7}}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (ir.Usage{}) {
		t.Fatalf("usage %+v", resp.Usage)
	}
}

func TestStreamCutBeforeMessageStopIsAnError(t *testing.T) {
	evs, err := decodeEvents([]byte("messageStart\t{\"role\":\"assistant\"}\ncontentBlockDelta\t{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hel\"}}\n"))
	if err == nil {
		t.Fatal("a stream without messageStop finished cleanly")
	}
	if len(evs) != 3 || evs[2].Text != "Hel" {
		t.Fatalf("events before the cut: %+v", evs)
	}
	if _, err := decodeEvents(nil); err == nil {
		t.Fatal("an empty stream finished cleanly")
	}
}

// An exception event that reaches the decoder is the upstream's error.
func TestStreamExceptionEventIsAnError(t *testing.T) {
	_, err := decodeEvents([]byte("messageStart\t{}\nthrottlingException\t{\"message\":\"slow down\"}\n"))
	var e *ir.Error
	if !errors.As(err, &e) || e.Status != 429 || e.Kind != ir.KindRateLimit || e.Message != "slow down" {
		t.Fatalf("got %v", err)
	}
}

func TestMalformedStreamEventsAreRefused(t *testing.T) {
	for _, raw := range []string{
		"contentBlockDelta\tnot json\n",
		"contentBlockDelta\t{\"contentBlockIndex\":-1,\"delta\":{\"text\":\"x\"}}\n",
		"contentBlockStart\t{\"contentBlockIndex\":0,\"start\":{\"toolUse\":{}}}\ncontentBlockStart\t{\"contentBlockIndex\":0,\"start\":{\"toolUse\":{}}}\n",
	} {
		if _, err := decodeEvents([]byte(raw)); err == nil {
			t.Errorf("%q decoded without error", raw)
		}
	}
}
