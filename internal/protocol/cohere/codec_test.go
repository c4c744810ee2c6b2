package cohere

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func userSays(text string) []ir.Message {
	return []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: text}}}}
}

func ptr[T any](v T) *T { return &v }

func TestRequestsTheWireCannotCarryAreRefusedNamingTheField(t *testing.T) {
	stops := []string{"a", "b", "c", "d", "e", "f"}
	cases := []struct {
		name  string
		req   ir.Request
		param string
	}{
		{"several answers", ir.Request{N: ptr(2), Messages: userSays("hi")}, "n"},
		{"a file", ir.Request{Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartFile, Media: &ir.Media{Data: "JVBERi0=", MIMEType: "application/pdf"}}}}}}, "messages[0].content[0]"},
		{"an image in a tool result", ir.Request{Messages: []ir.Message{{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "c1",
			Content: []ir.Part{{Kind: ir.PartImage, Media: &ir.Media{URL: "https://example.org/a.png"}}}}}}}}}, "messages[0].content[0].content[0]"},
		{"a tool result without its call id", ir.Request{Messages: []ir.Message{{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{
			Content: []ir.Part{{Kind: ir.PartText, Text: "x"}}}}}}}}, "messages[0].content[0].tool_call_id"},
		{"a tool call without an id", ir.Request{Messages: append(userSays("hi"), ir.Message{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{Name: "f"}}}})}, "messages[1].content[0].id"},
		{"tool arguments that are not an object", ir.Request{Messages: append(userSays("hi"), ir.Message{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c", Name: "f", Arguments: "[1]"}}}})}, "messages[1].content[0].arguments"},
		{"an image in an assistant turn", ir.Request{Messages: append(userSays("hi"), ir.Message{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartImage, Media: &ir.Media{URL: "https://example.org/a.png"}}}})}, "messages[1].content[0]"},
		{"an image in the system prompt", ir.Request{System: []ir.Part{{Kind: ir.PartImage, Media: &ir.Media{URL: "https://example.org/a.png"}}}, Messages: userSays("hi")}, "system[0]"},
		{"an unknown role", ir.Request{Messages: []ir.Message{{Role: "function", Parts: []ir.Part{{Kind: ir.PartText, Text: "x"}}}}}, "messages[0].role"},
		{"six stop sequences", ir.Request{Stop: stops, Messages: userSays("hi")}, "stop"},
		{"no max tokens", ir.Request{MaxTokens: ptr(0), Messages: userSays("hi")}, "max_tokens"},
		{"a provider's own tool", ir.Request{Messages: userSays("hi"), Tools: []ir.Tool{{Native: json.RawMessage(`{"type":"web_search_20250305","name":"web_search"}`)}}}, "tools[0]"},
		{"a tool without a name", ir.Request{Messages: userSays("hi"), Tools: []ir.Tool{{Description: "x"}}}, "tools[0].name"},
		{"a named tool that is not offered", ir.Request{Messages: userSays("hi"), Tools: []ir.Tool{{Name: "f"}}, ToolChoice: &ir.ToolChoice{Mode: ir.ToolChoiceTool, Name: "g"}}, "tool_choice"},
		{"a schema that is not an object", ir.Request{Messages: userSays("hi"), ResponseFormat: &ir.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`[1]`)}}, "response_format"},
		{"nothing to say", ir.Request{Messages: userSays("")}, "messages"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Model = "command-a-03-2025"
			_, err := V2.EncodeRequest(&tc.req)
			e, ok := err.(*ir.Error)
			if !ok || e.Status != 400 || e.Param != tc.param {
				t.Fatalf("got %v, want a 400 naming %s", err, tc.param)
			}
		})
	}
}

func TestToolResultsInsideAUserTurnBecomeToolTurnsAheadOfItsText(t *testing.T) {
	req := ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
		{Kind: ir.PartText, Text: "and now?"},
		{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "c1", Content: []ir.Part{{Kind: ir.PartText, Text: "42"}}}},
	}}}}
	out, err := V2.EncodeRequest(&req)
	if err != nil {
		t.Fatal(err)
	}
	msgs := gjson.GetBytes(out, "messages")
	if msgs.Get("#").Int() != 2 || msgs.Get("0.role").Str != "tool" || msgs.Get("0.tool_call_id").Str != "c1" ||
		msgs.Get("0.content").Str != "42" || msgs.Get("1.role").Str != "user" || msgs.Get("1.content").Str != "and now?" {
		t.Fatalf("messages %s", msgs.Raw)
	}
}

func TestReasoningMapsToThinking(t *testing.T) {
	cases := []struct {
		r    *ir.Reasoning
		want string
	}{
		{nil, ""},
		{&ir.Reasoning{Disabled: true}, `{"type":"disabled"}`},
		{&ir.Reasoning{Effort: "none"}, `{"type":"disabled"}`},
		{&ir.Reasoning{Effort: "high"}, `{"type":"enabled"}`},
		{&ir.Reasoning{BudgetTokens: 3000}, `{"type":"enabled","token_budget":3000}`},
	}
	for _, tc := range cases {
		out, err := V2.EncodeRequest(&ir.Request{Model: "m", Messages: userSays("hi"), Reasoning: tc.r})
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(out, "thinking").Raw; got != tc.want {
			t.Errorf("%+v: thinking %s, want %s", tc.r, got, tc.want)
		}
	}
}

func TestErrorsAreClassifiedByStatusWithTheUpstreamMessage(t *testing.T) {
	cases := []struct {
		status     int
		body       string
		wantStatus int
		kind       ir.Kind
		retry      ir.RetryClass
		msg        string
	}{
		{400, `{"id":"a1","message":"invalid request: message must be at least 1 token long"}`, 400, ir.KindInvalidRequest, ir.RetryNever, "invalid request: message must be at least 1 token long"},
		{401, `{"message":"invalid api token"}`, 401, ir.KindAuthentication, ir.RetryNextAndCool, "invalid api token"},
		{498, `{"message":"blocked api token"}`, 401, ir.KindAuthentication, ir.RetryNextAndCool, "blocked api token"},
		{402, `{"message":"Please add a payment method"}`, 402, ir.KindQuota, ir.RetryNextAndCool, "Please add a payment method"},
		{404, `{"message":"model 'x' not found"}`, 404, ir.KindNotFound, ir.RetryNever, "model 'x' not found"},
		{422, `{"message":"unprocessable"}`, 422, ir.KindInvalidRequest, ir.RetryNever, "unprocessable"},
		{429, `{"message":"You are using a Trial key, which is limited to 10 API calls / minute."}`, 429, ir.KindRateLimit, ir.RetryNext, "You are using a Trial key, which is limited to 10 API calls / minute."},
		{499, `{"message":"client closed"}`, 502, ir.KindUpstream, ir.RetryNext, "client closed"},
		{500, `<html>oops</html>`, 500, ir.KindUpstream, ir.RetryNext, "upstream error: Internal Server Error"},
		{503, `{"message":"overloaded"}`, 503, ir.KindOverloaded, ir.RetryNext, "overloaded"},
		{504, ``, 504, ir.KindTimeout, ir.RetryNext, "upstream error: Gateway Timeout"},
	}
	for _, tc := range cases {
		e := V2.DecodeError(tc.status, []byte(tc.body))
		if e.Status != tc.wantStatus || e.Kind != tc.kind || e.Retry != tc.retry || e.Message != tc.msg {
			t.Errorf("%d %s: got %d %s retry %d %q", tc.status, tc.body, e.Status, e.Kind, e.Retry, e.Message)
		}
	}
	long := V2.DecodeError(400, []byte(`{"message":"`+strings.Repeat("é", 400)+`"}`))
	if len(long.Message) > maxMessage+len("…") {
		t.Errorf("a long message kept %d bytes", len(long.Message))
	}
}

func decodeEvents(t *testing.T, events ...[2]string) ([]ir.Event, error) {
	t.Helper()
	dec := V2.NewStreamDecoder()
	var evs []ir.Event
	emit := func(ev ir.Event) error { evs = append(evs, ev); return nil }
	for _, e := range events {
		if err := dec.Decode(e[0], []byte(e[1]), emit); err != nil {
			return evs, err
		}
	}
	return evs, dec.Finish(emit)
}

func TestAStreamCutBeforeMessageEndIsAnUpstreamFailure(t *testing.T) {
	_, err := decodeEvents(t,
		[2]string{"message-start", `{"id":"x","type":"message-start"}`},
		[2]string{"content-delta", `{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"Hel"}}}}`})
	if e, ok := err.(*ir.Error); !ok || e.Status != 502 || e.Retry != ir.RetryNext {
		t.Fatalf("got %v", err)
	}
	if _, err := decodeEvents(t); err == nil {
		t.Fatal("an empty stream was accepted")
	}
}

func TestAStreamThatFailsBeforeAnyContentLetsAnotherChannelTry(t *testing.T) {
	_, err := decodeEvents(t,
		[2]string{"", `{"id":"x","type":"message-start"}`},
		[2]string{"", `{"type":"message-end","delta":{"finish_reason":"ERROR","error":"internal failure"}}`})
	e, ok := err.(*ir.Error)
	if !ok || e.Status != 502 || e.Retry != ir.RetryNext || e.Message != "internal failure" {
		t.Fatalf("got %v", err)
	}
	_, err = decodeEvents(t, [2]string{"", `{"message":"stream broke"}`})
	if e, ok := err.(*ir.Error); !ok || e.Message != "stream broke" {
		t.Fatalf("an error object in the stream: %v", err)
	}
}

func TestEventsNamedOnlyByTheirSSENameDecode(t *testing.T) {
	evs, err := decodeEvents(t,
		[2]string{"message-start", `{"id":"x"}`},
		[2]string{"content-delta", `{"delta":{"message":{"content":{"text":"Hi"}}}}`},
		[2]string{"message-end", `{"delta":{"finish_reason":"STOP_SEQUENCE","usage":{"billed_units":{"input_tokens":3,"output_tokens":1}}}}`})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var stop ir.StopReason
	var usage ir.Usage
	for _, ev := range evs {
		text += ev.Text
		if ev.Type == ir.EventStop {
			stop = ev.StopReason
		}
		if ev.Type == ir.EventUsage {
			usage = *ev.Usage
		}
	}
	if text != "Hi" || stop != ir.StopSequence || usage != (ir.Usage{InputTokens: 3, OutputTokens: 1}) || evs[len(evs)-1].Type != ir.EventDone {
		t.Fatalf("text %q stop %q usage %+v events %+v", text, stop, usage, evs)
	}
}

func TestResponsesThatAreNotAnswersAreRefused(t *testing.T) {
	for _, body := range []string{``, `[]`, `{"id":"x"}`, `{"message":"oops"}`, `{"message":3}`} {
		if _, err := V2.DecodeResponse([]byte(body)); err == nil {
			t.Errorf("%q decoded", body)
		}
	}
}
