package protocol_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	goldenfile "github.com/turnpike-gw/turnpike/internal/protocol/golden"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// agentClient is the client side of a conversion: how the coding agent's
// request decodes, and how the converted answer is written for it.
type agentClient interface {
	decode(t *testing.T, body []byte) *ir.Request
	answer(t *testing.T, res *ir.Response) []byte
	stream(sink protocol.EventSink) protocol.StreamEncoder
}

// responsesClient is Codex: the Responses API, with the request's tool map
// deciding the kind of each call item.
type responsesClient struct{ req *responses.Request }

func (c *responsesClient) meta() responses.Meta {
	return responses.Meta{ID: "TEST", CreatedAt: 1700000000, Model: "client-model", Echo: c.req.Echo, Tools: c.req.Tools}
}

func (c *responsesClient) decode(t *testing.T, body []byte) *ir.Request {
	req, err := responses.DecodeRequest(body)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	c.req = req
	return req.IR
}

func (c *responsesClient) answer(t *testing.T, res *ir.Response) []byte {
	out, err := responses.EncodeResponse(res, c.meta())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c *responsesClient) stream(sink protocol.EventSink) protocol.StreamEncoder {
	return responses.NewStreamEncoder(sink, c.meta())
}

// codecClient is a chat wire's own client (Claude Code, Gemini CLI).
type codecClient struct{ codec protocol.Codec }

func (c codecClient) decode(t *testing.T, body []byte) *ir.Request {
	req, err := c.codec.DecodeRequest(body)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return req
}

func (c codecClient) answer(t *testing.T, res *ir.Response) []byte {
	out, err := c.codec.EncodeResponse(res)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c codecClient) stream(sink protocol.EventSink) protocol.StreamEncoder {
	return c.codec.NewStreamEncoder(sink, protocol.StreamOptions{})
}

type sseSink struct{ out, buf bytes.Buffer }

func (s *sseSink) Event(name string, data []byte) error {
	if !json.Valid(data) {
		return &ir.Error{Message: "invalid JSON event " + string(data)}
	}
	return sse.WriteEvent(&s.out, &s.buf, name, data)
}

// TestCodingAgentsConvertAcrossWires drives what Codex, Gemini CLI and
// Claude Code really send through the other wires (testdata/agents): the
// request becomes the golden upstream body, and the upstream's answer and
// stream (when the case has them) become the golden client answer and
// stream.
func TestCodingAgentsConvertAcrossWires(t *testing.T) {
	cases := []struct {
		name, request, model string
		client               agentClient
		upstream             protocol.UpstreamCodec
	}{
		{"codex_chat", "codex", "deepseek-chat", &responsesClient{}, openai.Chat},
		{"codex_messages", "codex", "claude-sonnet-4-5", &responsesClient{}, anthropic.Messages},
		{"codex_gemini", "codex", "gemini-3-pro-preview", &responsesClient{}, gemini.Generate},
		{"geminicli_messages", "geminicli_messages", "claude-sonnet-4-5", codecClient{gemini.Generate}, anthropic.Messages},
		{"claudecode_chat", "claudecode_chat", "deepseek-chat", codecClient{anthropic.Messages}, openai.Chat},
		{"claudecode_gemini", "claudecode_gemini", "gemini-3-pro-preview", codecClient{anthropic.Messages}, gemini.Generate},
	}
	dir := filepath.Join("testdata", "agents")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(dir, tc.name)
			req := tc.client.decode(t, readFile(t, filepath.Join(dir, tc.request+".request.json")))
			req.Model = tc.model
			body, err := tc.upstream.EncodeRequest(req)
			if err != nil {
				t.Fatalf("encode for upstream: %v", err)
			}
			goldenfile.Compare(t, base+".upstream.golden.json", goldenfile.Indent(t, body))
			if raw, ok := optFile(t, base+".answer.json"); ok {
				res, err := tc.upstream.DecodeResponse(raw)
				if err != nil {
					t.Fatalf("decode answer: %v", err)
				}
				goldenfile.Compare(t, base+".client.golden.json", goldenfile.Indent(t, tc.client.answer(t, res)))
			}
			if raw, ok := optFile(t, base+".stream.sse"); ok {
				evs, err := goldenfile.DecodeSSE(raw, tc.upstream.NewStreamDecoder())
				if err != nil {
					t.Fatalf("decode stream: %v", err)
				}
				sink := &sseSink{}
				enc := tc.client.stream(sink)
				for _, ev := range evs {
					if err := enc.Encode(ev); err != nil {
						t.Fatal(err)
					}
				}
				goldenfile.Compare(t, base+".client.golden.sse", sink.out.Bytes())
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func optFile(t *testing.T, path string) ([]byte, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}
