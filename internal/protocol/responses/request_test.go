package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestRequestsAChatChannelCannotServeAreRefusedNamingTheField(t *testing.T) {
	cases := []struct {
		name, body, param string
	}{
		{"previous response", `{"model":"m","input":"hi","previous_response_id":"resp_1"}`, "previous_response_id"},
		{"stored response", `{"model":"m","input":"hi","store":true}`, "store"},
		{"conversation", `{"model":"m","input":"hi","conversation":"conv_1"}`, "conversation"},
		{"background run", `{"model":"m","input":"hi","background":true}`, "background"},
		{"stored prompt", `{"model":"m","input":"hi","prompt":{"id":"pmpt_1"}}`, "prompt"},
		{"built-in tool choice", `{"model":"m","input":"hi","tool_choice":{"type":"file_search"}}`, "tool_choice"},
		{"item reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0].type"},
		{"computer call item", `{"model":"m","input":[{"role":"user","content":"x"},{"type":"computer_call","id":"c"}]}`, "input[1].type"},
		{"uploaded image", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "input[0].content[0].file_id"},
		{"audio content", `{"model":"m","input":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]}`, "input[0].content[0].type"},
		{"image in assistant turn", `{"model":"m","input":[{"role":"assistant","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]}`, "input[0].content[0].type"},
		{"missing model", `{"input":"hi"}`, "model"},
		{"missing input", `{"model":"m"}`, "input"},
		{"input of wrong type", `{"model":"m","input":5}`, "input"},
		{"unknown role", `{"model":"m","input":[{"role":"robot","content":"x"}]}`, "input[0].role"},
		{"call without id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id"},
		{"output without call id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id"},
		{"temperature too high", `{"model":"m","input":"hi","temperature":3}`, "temperature"},
		{"zero output tokens", `{"model":"m","input":"hi","max_output_tokens":0}`, "max_output_tokens"},
		{"unknown effort", `{"model":"m","input":"hi","reasoning":{"effort":"max"}}`, "reasoning.effort"},
		{"schema missing", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x"}}}`, "text.format.schema"},
		{"metadata not an object", `{"model":"m","input":"hi","metadata":[1]}`, "metadata"},
		{"stream not a boolean", `{"model":"m","input":"hi","stream":"yes"}`, "stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequest([]byte(tc.body))
			e, ok := err.(*ir.Error)
			if !ok || e.Status != 400 || e.Param != tc.param {
				t.Fatalf("got %#v, want a 400 naming %s", err, tc.param)
			}
			if !strings.Contains(e.Message, tc.param) {
				t.Errorf("message %q does not name %s", e.Message, tc.param)
			}
		})
	}
}

func TestHarmlessStatelessFieldsAreAccepted(t *testing.T) {
	body := `{"model":"m","input":"hi","store":false,"background":false,"previous_response_id":null,"include":["reasoning.encrypted_content"],"truncation":"auto","service_tier":"auto","prompt_cache_key":"k","safety_identifier":"sid"}`
	req, err := DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if req.IR.User != "sid" {
		t.Errorf("safety_identifier not used as user: %q", req.IR.User)
	}
}

func TestResponseObjectEchoesTheRequestFields(t *testing.T) {
	req, err := DecodeRequest([]byte(`{"model":"m","input":"hi","instructions":"be kind","temperature":0.2,"max_output_tokens":9,
		"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":"none","metadata":{"a":"b"},"user":"u"}`))
	if err != nil {
		t.Fatal(err)
	}
	m := testMeta()
	m.Echo = req.Echo
	out, err := EncodeResponse(&ir.Response{Content: []ir.Part{{Kind: ir.PartText, Text: "ok"}}, StopReason: ir.StopEnd}, m)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"instructions": "be kind", "temperature": 0.2, "max_output_tokens": 9.0, "tool_choice": "none", "user": "u", "model": "client-model", "status": "completed"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if tools, _ := got["tools"].([]any); len(tools) != 1 {
		t.Errorf("tools not echoed: %v", got["tools"])
	}
}

func TestUsageIsReadFromResponseObjectsAndTerminalEvents(t *testing.T) {
	obj := []byte(`{"id":"resp_1","object":"response","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":17}}`)
	want := ir.Usage{InputTokens: 10, OutputTokens: 7, CacheReadTokens: 4, ReasoningTokens: 3}
	if u, ok := SniffUsage(obj); !ok || u != want {
		t.Errorf("object usage %+v %v", u, ok)
	}
	if id := ResponseIDOf(obj); id != "resp_1" {
		t.Errorf("object id %q", id)
	}
	completed := []byte(`{"type":"response.completed","sequence_number":9,"response":{"id":"resp_2","object":"response","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3}}}}`)
	for _, name := range []string{"response.completed", ""} {
		if u, ok := SniffStreamUsage(name, completed); !ok || u != want {
			t.Errorf("event %q usage %+v %v", name, u, ok)
		}
	}
	if id := ResponseIDOf(completed); id != "resp_2" {
		t.Errorf("event id %q", id)
	}
	delta := []byte(`{"type":"response.output_text.delta","delta":"\"usage\":{\"input_tokens\":5}"}`)
	if _, ok := SniffStreamUsage("response.output_text.delta", delta); ok {
		t.Error("usage read from a text delta")
	}
	hostile := []byte(`{"usage":{"input_tokens":-5,"output_tokens":1e300,"input_tokens_details":{"cached_tokens":99}}}`)
	if u, ok := SniffUsage(hostile); ok {
		t.Errorf("hostile usage accepted: %+v", u)
	}
}

func TestFailEndsABrokenStreamWithResponseFailed(t *testing.T) {
	sink := &sseSink{}
	enc := NewStreamEncoder(sink, testMeta())
	for _, ev := range []ir.Event{{Type: ir.EventStart}, {Type: ir.EventBlockStart, Block: ir.BlockText}, {Type: ir.EventDelta, Text: "par"}} {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Fail("the upstream stream broke off"); err != nil {
		t.Fatal(err)
	}
	out := sink.out.String()
	for _, want := range []string{"event: response.output_text.done", `"status":"failed"`, `"message":"the upstream stream broke off"`, `"text":"par"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stream lacks %s:\n%s", want, out)
		}
	}
	if err := enc.Encode(ir.Event{Type: ir.EventDone}); err != nil || strings.Contains(sink.out.String(), "response.completed") {
		t.Errorf("events after the failure were written")
	}
}
