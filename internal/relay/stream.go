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
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// clientSink frames events for the client and flushes each one at once.
type clientSink struct {
	w       http.ResponseWriter
	flusher http.Flusher
	buf     bytes.Buffer
	// jsonArray frames events as elements of one JSON array.
	jsonArray bool
	n         int
	// pending is true when events were written since the last flush.
	pending bool
	started func()
}

func (s *clientSink) Event(name string, data []byte) error {
	s.started()
	var err error
	if s.jsonArray {
		s.buf.Reset()
		if s.n == 0 {
			s.buf.WriteByte('[')
		} else {
			s.buf.WriteString(",\r\n")
		}
		s.buf.Write(data)
		_, err = s.w.Write(s.buf.Bytes())
	} else {
		err = sse.WriteEvent(s.w, &s.buf, name, data)
	}
	s.n++
	s.pending = true
	return err
}

// flush sends what was written so far to the client.
func (s *clientSink) flush() {
	if s.pending && s.flusher != nil {
		s.flusher.Flush()
	}
	s.pending = false
}

func (s *clientSink) close() {
	if s.jsonArray {
		if s.n == 0 {
			s.started()
			_, _ = s.w.Write([]byte("["))
		}
		_, _ = s.w.Write([]byte("]"))
		s.pending = true
	}
	s.flush()
}

func (c *call) newSink() *clientSink {
	f, _ := c.w.(http.Flusher)
	s := &clientSink{w: c.w, flusher: f, jsonArray: c.sf.jsonArrayStream}
	s.started = func() {
		if c.wrote {
			return
		}
		c.wrote = true
		h := c.w.Header()
		if s.jsonArray {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
		}
		c.w.WriteHeader(http.StatusOK)
	}
	return s
}

// relayStream pumps the upstream stream to the client event by event.
func (c *call) relayStream(up protocol.Codec, resp *http.Response) error {
	rd := sse.NewReader(resp.Body, 0)
	sink := c.newSink()
	var err error
	var text func() string
	if up.Format() == c.sf.codec.Format() {
		text, err = c.pumpSame(up, rd, sink)
	} else {
		text, err = c.pumpConverted(up, rd, sink)
	}
	if err != nil && !c.wrote {
		// Nothing reached the client: the caller may try another channel.
		return err
	}
	sink.close()
	if err != nil {
		c.rl.Logger.Warn("stream ended early", "channel_id", c.channel.ID, "err", err)
	}
	c.settle(text)
	return nil
}

// pumpSame relays events untouched. It reads usage as events pass and
// drops the usage-only chunk the gateway itself asked for.
func (c *call) pumpSame(up protocol.Codec, rd *sse.Reader, sink *clientSink) (func() string, error) {
	kept := &keptEvents{format: up.Format()}
	sawUsage := false
	dropUsageChunk := up.Format() == protocol.OpenAI && !c.req.IncludeUsage
	for {
		ev, err := rd.Next()
		if err != nil {
			return kept.text(sawUsage), streamEnd(err)
		}
		name := eventName(ev.Name)
		if u, ok := up.SniffStreamUsage(name, ev.Data); ok {
			c.usage.Merge(u)
			sawUsage = true
			if dropUsageChunk && isUsageOnlyChunk(ev.Data) {
				continue
			}
		} else if !sawUsage {
			kept.add(ev.Data)
		}
		if err := sink.Event(name, ev.Data); err != nil {
			return kept.text(sawUsage), nil
		}
		if rd.Buffered() == 0 {
			sink.flush()
		}
	}
}

// eventName avoids allocating for the common unnamed event and for the
// few names the messages-native format repeats on every chunk.
func eventName(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "content_block_delta":
		return "content_block_delta"
	case "ping":
		return "ping"
	}
	return string(b)
}

// maxKeptEvents bounds the raw events kept for counting an answer's tokens
// when the upstream reports no usage; past it, text is extracted at once.
const maxKeptEvents = 4 << 20

// keptEvents holds the raw data of relayed events. Usage almost always
// arrives at the end of a stream, so the answer text is parsed out of them
// only in the rare case it does not, instead of on every chunk.
type keptEvents struct {
	format protocol.Format
	buf    []byte
	ends   []int
	over   strings.Builder
}

func (k *keptEvents) add(data []byte) {
	if len(k.buf)+len(data) > maxKeptEvents {
		appendDeltaText(&k.over, k.format, data)
		return
	}
	k.buf = append(k.buf, data...)
	k.ends = append(k.ends, len(k.buf))
}

// text returns the answer-text function for settle, nil when usage came.
func (k *keptEvents) text(sawUsage bool) func() string {
	if sawUsage {
		return nil
	}
	return func() string {
		var b strings.Builder
		start := 0
		for _, end := range k.ends {
			appendDeltaText(&b, k.format, k.buf[start:end])
			start = end
		}
		b.WriteString(k.over.String())
		return b.String()
	}
}

func textFn(b *strings.Builder, sawUsage bool) func() string {
	if sawUsage {
		return nil
	}
	return b.String
}

// streamEnd maps the end of an upstream stream: EOF is normal.
func streamEnd(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken", Message: "the upstream stream broke off", Retry: ir.RetryNext, Cause: err}
}

func isUsageOnlyChunk(data []byte) bool {
	ch := gjson.GetBytes(data, "choices")
	return ch.IsArray() && len(ch.Array()) == 0
}

// appendDeltaText keeps the answer text for counting when the upstream
// reports no usage.
func appendDeltaText(b *strings.Builder, f protocol.Format, data []byte) {
	for _, r := range gjson.GetManyBytes(data, deltaTextPaths[f]...) {
		b.WriteString(r.String())
	}
}

// deltaTextPaths are where each format's stream events carry answer text.
var deltaTextPaths = map[protocol.Format][]string{
	protocol.OpenAI:    {"choices.0.delta.content", "choices.0.delta.reasoning_content"},
	protocol.Anthropic: {"delta.text", "delta.thinking", "delta.partial_json"},
	protocol.Gemini:    {"candidates.0.content.parts.0.text"},
}

// pumpConverted decodes upstream events into IR and re-encodes them for the
// client, one by one.
func (c *call) pumpConverted(up protocol.Codec, rd *sse.Reader, sink *clientSink) (func() string, error) {
	dec := up.NewStreamDecoder()
	enc := c.streamEncoder(sink)
	var out strings.Builder
	emit := func(ev ir.Event) error {
		switch ev.Type {
		case ir.EventUsage:
			if ev.Usage != nil {
				c.usage.Merge(*ev.Usage)
			}
		case ir.EventDelta:
			out.WriteString(ev.Text)
			out.WriteString(ev.ArgumentsDelta)
		case ir.EventStart:
			if ev.Model == "" {
				ev.Model = c.model
			}
		case ir.EventDone:
			if c.usage.InputTokens == 0 {
				u := c.usage
				u.InputTokens = c.prompt
				if err := enc.Encode(ir.Event{Type: ir.EventUsage, Usage: &u}); err != nil {
					return err
				}
			}
		}
		return enc.Encode(ev)
	}
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = dec.Finish(emit)
				if err != nil {
					err = &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken", Message: "the upstream stream ended early", Retry: ir.RetryNext, Cause: err}
				}
			} else {
				err = streamEnd(err)
			}
			return textFn(&out, c.usage.OutputTokens > 0), err
		}
		if err := dec.Decode(string(ev.Name), ev.Data, emit); err != nil {
			return textFn(&out, c.usage.OutputTokens > 0), err
		}
		if rd.Buffered() == 0 {
			sink.flush()
		}
	}
}

// streamEncoder builds the client's stream encoder. OpenAI clients get the
// usage chunk only when they asked for it, as the OpenAI API behaves.
func (c *call) streamEncoder(sink protocol.EventSink) protocol.StreamEncoder {
	return c.sf.codec.NewStreamEncoder(sink, protocol.StreamOptions{IncludeUsage: c.req.IncludeUsage})
}
