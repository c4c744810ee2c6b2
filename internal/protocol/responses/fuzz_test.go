package responses

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func seedFixtures(f *testing.F, dir string) {
	for _, path := range fixtures(f, dir) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	seedFixtures(f, "request")
	f.Add([]byte(`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_file","file_data":"data:,%zz"}]}]}`))
	f.Add([]byte(`{"model":"m","input":[{"type":"reasoning","summary":{}}],"max_output_tokens":1e300}`))
	f.Add([]byte(`{"model":"m","input":[{"type":"function_call","call_id":"c","namespace":"n.s","name":"f"}],"tools":[{"type":"namespace","name":"n.s","tools":[{"type":"function","name":"f"},{"type":"web_search"}]},{"type":"custom","name":"p","format":{"type":"grammar","definition":1}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRequest(body)
		if err != nil {
			if e, ok := err.(*ir.Error); !ok || e.Status != 400 {
				t.Fatalf("decode error is not a 400 *ir.Error: %#v", err)
			}
			return
		}
		if req.IR.Model == "" || len(req.IR.Messages)+len(req.IR.System) == 0 {
			t.Fatalf("accepted a request without a model or input: %s", body)
		}
		out, err := EncodeResponse(&ir.Response{Content: []ir.Part{{Kind: ir.PartText, Text: "x"}}}, Meta{Echo: req.Echo})
		if err != nil || !json.Valid(out) {
			t.Fatalf("echoing the request broke the response: %v %s", err, out)
		}
	})
}

func FuzzSniffUsage(f *testing.F) {
	f.Add("response.completed", []byte(`{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":3,"output_tokens":2}}}`))
	f.Add("", []byte(`{"id":"resp_1","object":"response","usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":9}}}`))
	f.Add("response.failed", []byte(`{"response":{"usage":{"output_tokens":-1}}}`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		for _, u := range []ir.Usage{first(SniffUsage(data)), first(SniffStreamUsage(name, data))} {
			if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens > u.InputTokens || u.ReasoningTokens < 0 {
				t.Fatalf("impossible usage %+v from %s", u, data)
			}
		}
		if id := ResponseIDOf(data); len(id) > 200 {
			t.Fatalf("unbounded id")
		}
	})
}

func first(u ir.Usage, _ bool) ir.Usage { return u }

func FuzzDecodeResponse(f *testing.F) {
	seedFixtures(f, "response")
	f.Add([]byte(`{"status":"completed","output":[{"type":"function_call","call_id":"c","namespace":"n","name":"f","arguments":"{}"}]}`))
	f.Add([]byte(`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}]}]}`))
	req, err := DecodeRequest([]byte(toolRequest))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := req.DecodeResponse(body)
		if err != nil {
			return
		}
		switch res.StopReason {
		case ir.StopEnd, ir.StopToolUse, ir.StopMaxTokens:
		default:
			t.Fatalf("kept an answer that stopped on %q: %s", res.StopReason, body)
		}
		if out, err := req.EncodeResponse(res, "m"); err != nil || !json.Valid(out) {
			t.Fatalf("a decoded answer does not encode: %v %s", err, out)
		}
	})
}
