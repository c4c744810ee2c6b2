package responses

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// toolRequest declares a plain function, a namespaced one and a custom
// tool, so the answer's calls map back through the request's tool map.
const toolRequest = `{"model":"m","store":false,"input":"Hi","tools":[` +
	`{"type":"function","name":"plain","parameters":{"type":"object"}},` +
	`{"type":"namespace","name":"mcp__fs__","tools":[{"type":"function","name":"read","parameters":{"type":"object"}}]},` +
	`{"type":"custom","name":"patch"}]}`

// A Response object decodes into the IR answer whose encoding for the same
// request gives the client the same output again: text, reasoning with its
// encrypted content, and calls of every tool kind the request declared.
func TestDecodeResponseIsTheInverseOfEncodeResponse(t *testing.T) {
	req, err := DecodeRequest([]byte(toolRequest))
	if err != nil {
		t.Fatal(err)
	}
	ns := req.Tools.flatten("mcp__fs__", "read")
	cases := []struct {
		name string
		res  ir.Response
	}{
		{"text", ir.Response{StopReason: ir.StopEnd, Content: []ir.Part{{Kind: ir.PartText, Text: "Hello there"}},
			Usage: ir.Usage{InputTokens: 5, OutputTokens: 2}}},
		{"cut at max tokens", ir.Response{StopReason: ir.StopMaxTokens, Content: []ir.Part{{Kind: ir.PartText, Text: "Hel"}}}},
		{"reasoning then text", ir.Response{StopReason: ir.StopEnd, Content: []ir.Part{
			{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: "think", Signature: "enc"}},
			{Kind: ir.PartText, Text: "answer"}}, Usage: ir.Usage{InputTokens: 5, OutputTokens: 9, ReasoningTokens: 4}}},
		{"calls of every kind", ir.Response{StopReason: ir.StopToolUse, Content: []ir.Part{
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "plain", Arguments: `{"a":1}`}},
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c2", Name: ns, Arguments: `{}`}},
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c3", Name: "patch", Arguments: `{"input":"*** Begin"}`}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := req.EncodeResponse(&tc.res, "m")
			if err != nil {
				t.Fatal(err)
			}
			got, err := req.DecodeResponse(body)
			if err != nil {
				t.Fatalf("decode: %v\n%s", err, body)
			}
			again, _ := req.EncodeResponse(got, "m")
			if got.StopReason != tc.res.StopReason || got.Usage != tc.res.Usage || !reflect.DeepEqual(got.Content, tc.res.Content) {
				t.Fatalf("got %+v\nwant %+v", got, tc.res)
			}
			if len(again) == 0 {
				t.Fatal("the decoded answer does not encode")
			}
		})
	}
}

// Output IR has no part for, or an answer that did not end as the model
// meant, is refused rather than kept without it.
func TestDecodeResponseRefusesWhatIRCannotCarry(t *testing.T) {
	req, err := DecodeRequest([]byte(toolRequest))
	if err != nil {
		t.Fatal(err)
	}
	msg := func(content string) string {
		return `{"status":"completed","output":[{"type":"message","role":"assistant","content":[` + content + `]}]}`
	}
	cases := map[string]string{
		"not JSON":             `{"status":`,
		"failed":               `{"status":"failed","output":[]}`,
		"filtered":             `{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}`,
		"no output":            `{"status":"completed"}`,
		"a hosted tool's call": `{"status":"completed","output":[{"type":"web_search_call","id":"ws_1","status":"completed"}]}`,
		"a refusal":            msg(`{"type":"refusal","refusal":"no"}`),
		"a citation":           msg(`{"type":"output_text","text":"x","annotations":[{"type":"url_citation","url":"https://a"}]}`),
		"log probabilities":    msg(`{"type":"output_text","text":"x","annotations":[],"logprobs":[{"token":"x"}]}`),
		"raw reasoning text":   `{"status":"completed","output":[{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"t"}]}]}`,
		"an undeclared custom": `{"status":"completed","output":[{"type":"custom_tool_call","call_id":"c","name":"other","input":"x"}]}`,
		"a call without an id": `{"status":"completed","output":[{"type":"function_call","name":"plain","arguments":"{}"}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			if res, err := req.DecodeResponse([]byte(body)); !errors.Is(err, ErrNoIRForm) {
				t.Fatalf("decoded %+v, %v", res, err)
			}
		})
	}
}

// BenchmarkDecodeResponse is what a native answer costs a call that may
// fill the response cache: its Response object (a 4 KB message and a
// function call) read back into IR.
func BenchmarkDecodeResponse(b *testing.B) {
	req, err := DecodeRequest([]byte(toolRequest))
	if err != nil {
		b.Fatal(err)
	}
	res := &ir.Response{StopReason: ir.StopToolUse, Usage: ir.Usage{InputTokens: 900, OutputTokens: 1000}, Content: []ir.Part{
		{Kind: ir.PartText, Text: strings.Repeat("a few words ", 340)},
		{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "plain", Arguments: `{"path":"/tmp/x"}`}}}}
	body, err := req.EncodeResponse(res, "m")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := req.DecodeResponse(body); err != nil {
			b.Fatal(err)
		}
	}
}
