package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestDecodeRequestRejectsBadInputNamingTheField(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name  string
		body  string
		param string
	}{
		{"malformed JSON", `{"model":`, ""},
		{"body that is an array", `[1,2]`, ""},
		{"missing model", `{` + msgs + `}`, "model"},
		{"empty model", `{"model":"",` + msgs + `}`, "model"},
		{"model of the wrong type", `{"model":5,` + msgs + `}`, "model"},
		{"missing messages", `{"model":"m"}`, "messages"},
		{"empty messages", `{"model":"m","messages":[]}`, "messages"},
		{"messages not an array", `{"model":"m","messages":{}}`, "messages"},
		{"message not an object", `{"model":"m","messages":["hi"]}`, "messages[0]"},
		{"missing role", `{"model":"m","messages":[{"content":"hi"}]}`, "messages[0].role"},
		{"unknown role", `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role"},
		{"content of the wrong type", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content"},
		{"unknown part type", `{"model":"m","messages":[{"role":"user","content":[{"type":"video"}]}]}`, "messages[0].content[0].type"},
		{"text part without text", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text"},
		{"image in a system message", `{"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, "messages[0].content[0].type"},
		{"image without url", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "messages[0].content[0].image_url.url"},
		{"data URL without comma", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"audio without format", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA"}}]}]}`, "messages[0].content[0].input_audio.format"},
		{"file without data or id", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"filename":"a.pdf"}}]}]}`, "messages[0].content[0].file.file_data"},
		{"tool message without tool_call_id", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id"},
		{"tool call without id", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f"}}]}]}`, "messages[0].tool_calls[0].id"},
		{"tool call without name", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].function.name"},
		{"tool call arguments as a number", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":1}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"temperature above 2", `{"model":"m",` + msgs + `,"temperature":2.5}`, "temperature"},
		{"temperature below 0", `{"model":"m",` + msgs + `,"temperature":-0.1}`, "temperature"},
		{"temperature as a string", `{"model":"m",` + msgs + `,"temperature":"hot"}`, "temperature"},
		{"top_p above 1", `{"model":"m",` + msgs + `,"top_p":1.5}`, "top_p"},
		{"frequency_penalty out of range", `{"model":"m",` + msgs + `,"frequency_penalty":3}`, "frequency_penalty"},
		{"presence_penalty out of range", `{"model":"m",` + msgs + `,"presence_penalty":-2.1}`, "presence_penalty"},
		{"max_tokens zero", `{"model":"m",` + msgs + `,"max_tokens":0}`, "max_tokens"},
		{"max_tokens fractional", `{"model":"m",` + msgs + `,"max_tokens":1.5}`, "max_tokens"},
		{"max_completion_tokens negative", `{"model":"m",` + msgs + `,"max_completion_tokens":-1}`, "max_completion_tokens"},
		{"n zero", `{"model":"m",` + msgs + `,"n":0}`, "n"},
		{"seed as a string", `{"model":"m",` + msgs + `,"seed":"1"}`, "seed"},
		{"top_k fractional", `{"model":"m",` + msgs + `,"top_k":2.5}`, "top_k"},
		{"stop as a number", `{"model":"m",` + msgs + `,"stop":1}`, "stop"},
		{"stop array with a number", `{"model":"m",` + msgs + `,"stop":["a",1]}`, "stop[1]"},
		{"stream as a string", `{"model":"m",` + msgs + `,"stream":"yes"}`, "stream"},
		{"include_usage as a string", `{"model":"m",` + msgs + `,"stream_options":{"include_usage":"yes"}}`, "stream_options.include_usage"},
		{"unknown response_format type", `{"model":"m",` + msgs + `,"response_format":{"type":"xml"}}`, "response_format.type"},
		{"json_schema without its object", `{"model":"m",` + msgs + `,"response_format":{"type":"json_schema"}}`, "response_format.json_schema"},
		{"unknown reasoning_effort", `{"model":"m",` + msgs + `,"reasoning_effort":"extreme"}`, "reasoning_effort"},
		{"tools not an array", `{"model":"m",` + msgs + `,"tools":{}}`, "tools"},
		{"tool of another type", `{"model":"m",` + msgs + `,"tools":[{"type":"web_search"}]}`, "tools[0].type"},
		{"tool without function", `{"model":"m",` + msgs + `,"tools":[{"type":"function"}]}`, "tools[0].function"},
		{"tool without name", `{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{}}]}`, "tools[0].function.name"},
		{"tool parameters not an object", `{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{"name":"f","parameters":"x"}}]}`, "tools[0].function.parameters"},
		{"unknown tool_choice string", `{"model":"m",` + msgs + `,"tool_choice":"any"}`, "tool_choice"},
		{"tool_choice object without name", `{"model":"m",` + msgs + `,"tool_choice":{"type":"function","function":{}}}`, "tool_choice.function.name"},
		{"parallel_tool_calls as a string", `{"model":"m",` + msgs + `,"parallel_tool_calls":"no"}`, "parallel_tool_calls"},
		{"metadata as an array", `{"model":"m",` + msgs + `,"metadata":[]}`, "metadata"},
		{"user as a number", `{"model":"m",` + msgs + `,"user":7}`, "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Chat.DecodeRequest([]byte(tt.body))
			var e *ir.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *ir.Error", err)
			}
			if e.Status != 400 || e.Kind != ir.KindInvalidRequest {
				t.Errorf("status %d kind %s, want 400 invalid_request_error", e.Status, e.Kind)
			}
			if e.Param != tt.param {
				t.Errorf("param = %q, want %q", e.Param, tt.param)
			}
			if tt.param != "" && !strings.Contains(e.Message, tt.param) {
				t.Errorf("message %q does not name %q", e.Message, tt.param)
			}
		})
	}
}

func TestDecodeRequestAcceptsLenientForms(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, r *ir.Request)
	}{
		{"nulls count as absent", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":null,"tools":null,"stop":null}`,
			func(t *testing.T, r *ir.Request) {
				if r.Temperature != nil || r.Tools != nil || r.Stop != nil {
					t.Errorf("null fields were set: %+v", r)
				}
			}},
		{"stop as a single string", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":"END"}`,
			func(t *testing.T, r *ir.Request) {
				if len(r.Stop) != 1 || r.Stop[0] != "END" {
					t.Errorf("Stop = %q", r.Stop)
				}
			}},
		{"max_completion_tokens wins over max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":10,"max_completion_tokens":20}`,
			func(t *testing.T, r *ir.Request) {
				if r.MaxTokens == nil || *r.MaxTokens != 20 {
					t.Errorf("MaxTokens = %v", r.MaxTokens)
				}
			}},
		{"integral float accepted as integer", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":16.0}`,
			func(t *testing.T, r *ir.Request) {
				if r.MaxTokens == nil || *r.MaxTokens != 16 {
					t.Errorf("MaxTokens = %v", r.MaxTokens)
				}
			}},
		{"non-positive top_k means unset", `{"model":"m","messages":[{"role":"user","content":"hi"}],"top_k":-1}`,
			func(t *testing.T, r *ir.Request) {
				if r.TopK != nil {
					t.Errorf("TopK = %v", *r.TopK)
				}
			}},
		{"reasoning_effort none disables reasoning", `{"model":"m","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"none"}`,
			func(t *testing.T, r *ir.Request) {
				if r.Reasoning == nil || !r.Reasoning.Disabled {
					t.Errorf("Reasoning = %+v", r.Reasoning)
				}
			}},
		{"image_url as a bare string", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"https://x/a.png"}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if m := r.Messages[0].Parts[0].Media; m == nil || m.URL != "https://x/a.png" {
					t.Errorf("Media = %+v", m)
				}
			}},
		{"percent-encoded data URL becomes base64", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/svg+xml,%3Csvg%2F%3E"}}]}]}`,
			func(t *testing.T, r *ir.Request) {
				m := r.Messages[0].Parts[0].Media
				if m.MIMEType != "image/svg+xml" || m.Data != "PHN2Zy8+" {
					t.Errorf("Media = %+v", m)
				}
			}},
		{"file id travels as a marked URL", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-abc"}}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if m := r.Messages[0].Parts[0].Media; m.URL != fileIDScheme+"file-abc" {
					t.Errorf("Media = %+v", m)
				}
			}},
		{"tool call arguments as an object", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f","arguments":{"a":1}}}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if c := r.Messages[0].Parts[0].ToolCall; c.Arguments != `{"a":1}` {
					t.Errorf("Arguments = %q", c.Arguments)
				}
			}},
		{"empty tool call arguments become an empty object", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if c := r.Messages[0].Parts[0].ToolCall; c.Arguments != "{}" {
					t.Errorf("Arguments = %q", c.Arguments)
				}
			}},
		{"empty text is dropped", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"x"}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if n := len(r.Messages[0].Parts); n != 1 {
					t.Errorf("%d parts, want 1", n)
				}
			}},
		{"unknown fields are ignored", `{"model":"m","messages":[{"role":"user","content":"hi","extra":1}],"logit_bias":{"1":2},"store":true}`,
			func(t *testing.T, r *ir.Request) {
				if r.Model != "m" {
					t.Errorf("Model = %q", r.Model)
				}
			}},
		{"tool result name is filled from the earlier call", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"lookup","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
			func(t *testing.T, r *ir.Request) {
				if res := r.Messages[1].Parts[0].ToolResult; res.Name != "lookup" || res.CallID != "c1" {
					t.Errorf("ToolResult = %+v", res)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Chat.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			tt.check(t, r)
		})
	}
}
