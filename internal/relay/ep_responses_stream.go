package relay

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
	"github.com/turnpike-gw/turnpike/internal/routing"
)

func isEventStream(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// respSink writes SSE events to the client, starting the answer at the
// first one and flushing only when the upstream has nothing more buffered.
type respSink struct {
	c   *epCall
	fl  http.Flusher
	buf bytes.Buffer
}

func newRespSink(c *epCall) *respSink {
	fl, _ := c.w.(http.Flusher)
	return &respSink{c: c, fl: fl}
}

func (s *respSink) Event(name string, data []byte) error {
	if !s.c.wrote {
		s.c.startStream()
	}
	return sse.WriteEvent(s.c.w, &s.buf, name, data)
}

func (s *respSink) flush() {
	if s.fl != nil && s.c.wrote {
		s.fl.Flush()
	}
}

// relayNativeStream passes the channel's events through as they arrive,
// reading usage from the terminal event and the id from the first. A
// stream that breaks before its first event may still go to the next
// channel.
func (rc *respCall) relayNativeStream(ch *routing.Channel, resp *http.Response) error {
	rd := sse.NewReader(resp.Body, 0)
	sink := newRespSink(rc.epCall)
	var usage ir.Usage
	sawUsage := false
	var text strings.Builder
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				if !rc.wrote {
					return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken", Message: "the upstream stream broke off", Retry: ir.RetryNext, Cause: err}
				}
				rc.rl.Logger.Warn("stream ended early", "endpoint", rc.ep.name, "channel_id", ch.ID, "err", err)
			}
			break
		}
		name := string(ev.Name)
		if u, ok := responses.SniffStreamUsage(name, ev.Data); ok {
			usage, sawUsage = u, true
		}
		rc.noteEvent(ch, name, ev.Data, &text)
		if err := sink.Event(name, ev.Data); err != nil {
			break // the client left; bill what the upstream produced
		}
		if rd.Buffered() == 0 {
			sink.flush()
		}
	}
	if !rc.wrote {
		rc.startStream()
	}
	sink.flush()
	if !sawUsage {
		usage = ir.Usage{InputTokens: rc.inputTokens(), OutputTokens: countTexts(rc.model, gjson.Result{Type: gjson.String, Str: text.String()})}
	}
	rc.settle(tokensPlusCall(rc.price, usage))
	return nil
}

// noteEvent remembers the response id from response.created and keeps
// delta text for counting when no usage arrives.
func (rc *respCall) noteEvent(ch *routing.Channel, name string, data []byte, text *strings.Builder) {
	typ := name
	if typ == "" || typ == "message" {
		typ = gjson.GetBytes(data, "type").String()
	}
	switch typ {
	case "response.created":
		rc.remember(ch, responses.ResponseIDOf(data))
	case "response.output_text.delta", "response.function_call_arguments.delta", "response.reasoning_summary_text.delta":
		text.WriteString(gjson.GetBytes(data, "delta").String())
	}
}

// relayConverted answers a Responses call from a chat channel's complete
// answer.
func (rc *respCall) relayConverted(codec protocol.Codec, resp *http.Response) error {
	body, err := readAnswer(resp)
	if err != nil {
		return err
	}
	res, err := codec.DecodeResponse(body)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: "the upstream answer could not be understood", Retry: ir.RetryNext, Cause: err}
	}
	u := res.Usage
	if u.InputTokens == 0 {
		u.InputTokens = rc.inputTokens()
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = countTexts(rc.model, gjson.Result{Type: gjson.String, Str: contentText(res.Content)})
	}
	res.Usage = u
	out, err := responses.EncodeResponse(res, responses.Meta{Model: rc.model, Echo: rc.dec.Echo})
	if err != nil {
		return err
	}
	rc.answer("application/json", out, tokensPlusCall(rc.price, u))
	return nil
}

// relayConvertedStream turns a chat channel's stream into the Responses
// event stream, event by event.
func (rc *respCall) relayConvertedStream(codec protocol.Codec, resp *http.Response) error {
	rd := sse.NewReader(resp.Body, 0)
	sink := newRespSink(rc.epCall)
	enc := responses.NewStreamEncoder(sink, responses.Meta{Model: rc.model, Echo: rc.dec.Echo})
	cv := &convertedStream{rc: rc, enc: enc}
	err := cv.pump(codec.NewStreamDecoder(), rd, sink)
	if err != nil && !rc.wrote {
		return err
	}
	if err != nil {
		rc.rl.Logger.Warn("stream ended early", "endpoint", rc.ep.name, "channel_id", rc.channel.ID, "err", err)
		_ = enc.Fail("the upstream stream broke off")
	}
	if !rc.wrote {
		rc.startStream()
	}
	sink.flush()
	u := cv.usage
	if u.InputTokens == 0 {
		u.InputTokens = rc.inputTokens()
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = countTexts(rc.model, gjson.Result{Type: gjson.String, Str: cv.text.String()})
	}
	rc.settle(tokensPlusCall(rc.price, u))
	return nil
}

type convertedStream struct {
	rc    *respCall
	enc   *responses.StreamEncoder
	usage ir.Usage
	text  strings.Builder
}

func (cv *convertedStream) emit(ev ir.Event) error {
	switch ev.Type {
	case ir.EventUsage:
		if ev.Usage != nil {
			cv.usage.Merge(*ev.Usage)
		}
	case ir.EventDelta:
		cv.text.WriteString(ev.Text)
		cv.text.WriteString(ev.ArgumentsDelta)
	case ir.EventDone:
		// The final Response must show the input the call is billed for.
		if cv.usage.InputTokens == 0 {
			u := cv.usage
			u.InputTokens = cv.rc.inputTokens()
			if err := cv.enc.Encode(ir.Event{Type: ir.EventUsage, Usage: &u}); err != nil {
				return err
			}
		}
	}
	return cv.enc.Encode(ev)
}

func (cv *convertedStream) pump(dec protocol.StreamDecoder, rd *sse.Reader, sink *respSink) error {
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			if err := dec.Finish(cv.emit); err != nil {
				return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken", Message: "the upstream stream ended early", Retry: ir.RetryNext, Cause: err}
			}
			return nil
		}
		if err != nil {
			return streamEnd(err)
		}
		if err := dec.Decode(string(ev.Name), ev.Data, cv.emit); err != nil {
			return err
		}
		if rd.Buffered() == 0 {
			sink.flush()
		}
	}
}
