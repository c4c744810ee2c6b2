package relay

import (
	"io"
	"net/http"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// maxResponseBody bounds a non-streamed answer held for conversion.
const maxResponseBody = 64 << 20

// relayRegular answers a non-streamed call: the upstream body as it is when
// the formats match, converted otherwise.
func (c *call) relayRegular(up protocol.UpstreamCodec, resp *http.Response) error {
	// Sized from the declared length: io.ReadAll starts at 512 bytes and
	// grows by copying, several allocations for an answer of a few KB.
	body, err := readAllSized(io.LimitReader(resp.Body, maxResponseBody), resp.ContentLength, maxResponseBody)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_read_failed", Message: "the upstream answer was cut off", Retry: ir.RetryNext, Cause: err}
	}
	// Reading usage from the answer, converting it and settling go 6.5 KB
	// below the handler or more: aside, they leave the handler's stack at
	// the size the connection's next call (perhaps a stream) starts with.
	aside(func() { err = c.answerRegular(up, body) })
	return err
}

// answerRegular bills and writes a non-streamed answer read whole.
func (c *call) answerRegular(up protocol.UpstreamCodec, body []byte) error {
	var err error
	var out []byte
	var res *ir.Response // the converted answer (nil when passed through)
	var text func() string
	var blocked *ir.Error
	if up.Format() == c.sf.codec.Format() {
		u, ok := c.sf.codec.SniffUsage(body)
		if ok {
			c.usage = u
		} else {
			text = func() string { return answerText(c.sf.codec, body) }
		}
		if out, blocked, err = c.guardPassthrough(body); err != nil {
			return err
		}
	} else {
		if res, err = up.DecodeResponse(body); err != nil {
			return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: "the upstream answer could not be understood", Retry: ir.RetryNext, Cause: err}
		}
		if res.Model == "" {
			res.Model = c.model
		}
		c.usage = res.Usage
		if res.Usage.OutputTokens == 0 {
			text = func() string { return contentText(res.Content) }
		}
		if res.Usage.InputTokens == 0 {
			res.Usage.InputTokens = c.promptTokens()
		}
		blocked, _ = c.guardAnswer(res)
		if out, err = c.sf.codec.EncodeResponse(res); err != nil {
			return err
		}
	}
	c.wrote = true
	if blocked == nil {
		c.keepRegular(res, body)
	}
	// Settled before the answer leaves: once the client holds it, the
	// charge is journaled, whatever happens to this process next. An
	// answer a guardrail blocked is billed too: the upstream answered.
	c.settleUsage(text)
	if blocked != nil {
		c.refusedBilled()
		c.status = blocked.Status
		writeError(c.w, c.sf.codec, blocked)
		return nil
	}
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(out)
	return nil
}

func answerText(codec protocol.Codec, body []byte) string {
	res, err := codec.DecodeResponse(body)
	if err != nil {
		return ""
	}
	return contentText(res.Content)
}

func contentText(parts []ir.Part) string {
	var b strings.Builder
	for _, p := range parts {
		switch p.Kind {
		case ir.PartText:
			b.WriteString(p.Text)
		case ir.PartThinking:
			b.WriteString(p.Thinking.Text)
		case ir.PartToolCall:
			b.WriteString(p.ToolCall.Name)
			b.WriteString(p.ToolCall.Arguments)
		}
	}
	return b.String()
}
