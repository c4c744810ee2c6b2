package relay

import (
	"bytes"
	"io"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
)

// rawChunk is how much of a binary answer is read and relayed at a time.
const rawChunk = 32 << 10

// rawFrames reads a binary answer (speech audio) as a series of chunks, so
// it goes through the same pump and tail as event streams.
type rawFrames struct {
	r   io.Reader
	buf []byte
}

func newRawFrames(r io.Reader) protocol.EventReader {
	return &rawFrames{r: r, buf: make([]byte, rawChunk)}
}

// NextEvent returns the next chunk; a read that returned bytes and an error
// returns the bytes first and the error on the next call.
func (f *rawFrames) NextEvent() (name, data []byte, err error) {
	for {
		n, err := f.r.Read(f.buf)
		if n > 0 {
			return nil, f.buf[:n], nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// Buffered is always zero: every chunk is written as soon as it is read.
func (f *rawFrames) Buffered() int { return 0 }

// rawStep writes each chunk as it is and counts the bytes.
type rawStep struct {
	sink  *sink
	bytes int64
}

func (s *rawStep) event(_ string, data []byte) error {
	s.bytes += int64(len(data))
	return s.sink.Raw(data)
}

func (s *rawStep) end() error { return nil }

// relayBinary streams an answer (speech audio) to the client as it
// arrives, through the one stream tail. The first chunk is read before
// anything is written, so an upstream that fails at once can still be
// replaced by the next channel.
func relayBinary(c *epCall, _ *routing.Channel, resp *http.Response) error {
	s := newSink(c.w, c, false)
	s.contentType = resp.Header.Get("Content-Type")
	if s.contentType == "" {
		s.contentType = "application/octet-stream"
	}
	s.disposition = resp.Header.Get("Content-Disposition")
	step := &rawStep{sink: s}
	return c.relayEvents(streamTail{body: resp.Body, frames: newRawFrames, sink: s, step: step, tally: &streamTally{}, uncounted: true,
		broken: cutConnection(s)}, nil,
		func(ir.Usage) charge {
			ch := c.ep.bill(c, nil)
			if ch.detail == nil {
				ch.detail = map[string]any{}
			}
			ch.detail["bytes"] = step.bytes
			return ch
		})
}

// relayEventAnswer relays an endpoint's event stream (partial images,
// transcript deltas) through the one stream tail and bills it like the
// endpoint's whole answer, on the last event that carried usage (the
// terminal image_generation.completed, image_edit.completed or
// transcript.text.done).
func (c *epCall) relayEventAnswer(resp *http.Response) error {
	s := newSink(c.w, c, false)
	var last []byte
	step := &passStep{sp: eventUsage{}, sink: s, tally: &streamTally{}, noText: true, ends: eventAnswerEnds, note: func(_ string, data []byte) {
		if bytes.Contains(data, usageField) {
			last = append(last[:0], data...)
		}
	}}
	return c.relayEvents(streamTail{body: resp.Body, sink: s, step: step, tally: step.tally, uncounted: true, broken: eventStreamBroken(s)}, nil,
		func(ir.Usage) charge { return c.ep.bill(c, last) })
}

var usageField = []byte(`"usage"`)

// eventUsage reads usage from the events of the non-chat OpenAI streams,
// which carry it in a top-level usage object of their terminal event.
type eventUsage struct{}

func (eventUsage) SniffStreamUsage(_ string, data []byte) (ir.Usage, bool) {
	if !bytes.Contains(data, usageField) {
		return ir.Usage{}, false
	}
	return answerUsage(data)
}

// AppendStreamText adds nothing: these answers are not billed by counting
// their text.
func (eventUsage) AppendStreamText(dst []byte, _ string, _ []byte) []byte { return dst }

func (eventUsage) UsageOnlyEvent(string, []byte) bool { return false }
