package relay

import (
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// eventStep is what one surface does with each upstream event: pass it
// through while reading usage (passStep), or decode and re-encode it
// (convertStep). Everything else about relaying a stream is the pump's.
type eventStep interface {
	event(name string, data []byte) error
	// end runs when the upstream stream ended normally.
	end() error
}

// pump relays an upstream SSE stream to s, one event at a time. It flushes
// whenever no upstream bytes are waiting, so events that arrived together
// leave together and none waits for the next. It returns nil when the stream
// ended normally or the client went away (the answer so far is billed), and
// otherwise the stream's error: the one place a broken stream is mapped.
// A client that went away ends it at once: nothing more is read.
func pump(body io.Reader, s *sink, step eventStep) error {
	return pumpSSE(body, s, step)
}

// pumpSSE is pumpFrames for server-sent events, the framing of every
// upstream except those whose adapter is an upstream.Framer. It reads the
// upstream itself, at the top of its loop, and hands the bytes to a
// decoder: a stream waits for its next chunk in one shallow call instead of
// under the parser's chain of reads, which each of thousands of open
// streams would walk again, cold, at every chunk. Before each read it
// flushes, so events that arrived together leave together and none waits
// for more input.
func pumpSSE(body io.Reader, s *sink, step eventStep) error {
	d := sse.NewDecoder(0)
	defer d.Release()
	for {
		s.flush()
		_, rerr := d.Fill(body)
		for {
			name, data, ok, err := d.Next()
			if err != nil {
				return clientGone(s, streamBroken(err))
			}
			if !ok {
				break
			}
			if err := step.event(eventName(name), data); err != nil {
				return clientGone(s, err)
			}
		}
		if rerr != nil {
			return clientGone(s, endOfStream(rerr, d.End(), step))
		}
	}
}

// endOfStream maps how a stream's reads ended: the end of a whole stream
// (end is io.EOF) ends the step, anything else broke it.
func endOfStream(readErr, end error, step eventStep) error {
	if !errors.Is(readErr, io.EOF) {
		return streamBroken(readErr)
	}
	if !errors.Is(end, io.EOF) {
		return streamBroken(end)
	}
	return step.end()
}

// clientLeftGrace is how long an upstream call that does not stream is
// still awaited after its client left, so an answer already being made is
// billed on its usage. A stream its client left is closed at once
// (CONTRACT §13).
const clientLeftGrace = 10 * time.Second

// pumpFrames is pump for an upstream stream in any framing.
func pumpFrames(body io.Reader, frames func(io.Reader) protocol.EventReader, s *sink, step eventStep) error {
	rd := frames(flushOnWait{r: body, s: s})
	if r, ok := rd.(interface{ Release() }); ok {
		defer r.Release()
	}
	for {
		name, data, err := rd.NextEvent()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = step.end()
			} else {
				err = streamBroken(err)
			}
			return clientGone(s, err)
		}
		if err := step.event(eventName(name), data); err != nil {
			return clientGone(s, err)
		}
		if rd.Buffered() == 0 {
			s.flush()
		}
	}
}

// clientGone turns a failure caused by the client leaving into a normal end.
func clientGone(s *sink, err error) error {
	if s.err != nil {
		return nil
	}
	return err
}

// flushOnWait flushes the sink before every read of the upstream body. The
// pump's Buffered check cannot see an event that is complete while the
// start of the next one is already buffered; the reader then reads again,
// and the complete event must not wait for the rest of the next.
type flushOnWait struct {
	r io.Reader
	s *sink
}

func (f flushOnWait) Read(p []byte) (int, error) {
	f.s.flush()
	return f.r.Read(p)
}

// streamBroken is a stream that failed while being read.
func streamBroken(err error) error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken", Message: "the upstream stream broke off", Retry: ir.RetryNext, Cause: err}
}

// streamCut is a stream that ended before it was a whole answer.
func streamCut(err error) error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken", Message: "the upstream stream ended early", Retry: ir.RetryNext, Cause: err}
}

// eventName avoids allocating for the common unnamed event and for the
// names the messages-native and Responses formats repeat on every chunk.
func eventName(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "content_block_delta":
		return "content_block_delta"
	case "ping":
		return "ping"
	case "response.output_text.delta":
		return "response.output_text.delta"
	}
	return string(b)
}

// streamTally is what a stream leaves for settling: the usage the upstream
// reported, and the answer text as it was delivered — kept to the end,
// because a client that leaves is billed the output it received even where
// the upstream reported usage early (messages-wire message_start).
type streamTally struct {
	usage  ir.Usage
	answer keptAnswer
}

// passStep relays events untouched, reading usage as they pass.
type passStep struct {
	sp    protocol.StreamPassthrough
	sink  *sink
	tally *streamTally
	// dropUsageOnly drops the usage-only event the gateway asked for on
	// behalf of a client that did not.
	dropUsageOnly bool
	// note sees every event before it is relayed (nil for none).
	note func(name string, data []byte)
	// noText: the answer is never billed by counting its text, so no
	// event is kept for it.
	noText bool
	// ends, when set, says which event marks the stream whole: a stream
	// that ends before one was cut off, and is never passed on as whole
	// (CONTRACT §22). whole is set once it passed.
	ends  protocol.StreamEndSniffer
	whole bool
	// at is the event an aside moment reads and, from the usage sniff,
	// whether it carried nothing but usage; the usage itself goes
	// straight to the tally, so the step stays small for open streams.
	atName      string
	atData      []byte
	atUsageOnly bool
}

func (p *passStep) event(name string, data []byte) error {
	if p.note != nil {
		p.note(name, data)
	}
	if p.ends != nil && !p.whole {
		p.sniffEnd(name, data)
	}
	usageOnly := false
	if namesNonNull(data, usageName) {
		var drop bool
		if usageOnly, drop = p.sniffUsage(name, data); drop {
			return nil
		}
	}
	if err := p.sink.Event(name, data); err != nil {
		return err
	}
	if !usageOnly && !p.noText {
		p.tally.answer.keepEvent(name, data) // delivered
		if !p.sink.textSent {
			p.firstText(name, data)
		}
	}
	return nil
}

// The few moments of an event that go aside hand the step itself to a
// function that is no closure (asideOn), with the event and the results in
// the step's at fields: a closure would be allocated, with the variables it
// shares, at every such moment, four a stream.

// sniffEnd reads whether the event marks the stream whole.
func (p *passStep) sniffEnd(name string, data []byte) {
	if namesNonNull(data, finishName) {
		// A chat chunk with a finish reason is read with a JSON
		// path lookup through the choices, 3 KB deep: aside.
		p.asideAt(sniffEndAside, name, data)
		return
	}
	p.whole = p.ends.StreamEnds(name, data)
}

// sniffUsage adds the usage an event carries to the tally; drop is set for
// a usage-only event the client did not ask for.
func (p *passStep) sniffUsage(name string, data []byte) (usageOnly, drop bool) {
	// The dialects read usage with a JSON path lookup 3 KB deep,
	// under the pump's own 3.7 KB: aside, the few events that carry
	// usage (one or two a stream) do not double the handler's stack.
	p.asideAt(sniffUsageAside, name, data)
	return p.atUsageOnly, p.atUsageOnly && p.dropUsageOnly
}

// firstText sends the event at once if it carries the answer's first text.
func (p *passStep) firstText(name string, data []byte) {
	// Reading an event's text is a JSON path lookup as deep as
	// the usage's; until the first text is sent, aside too, with
	// the first flush it makes.
	p.asideAt(firstTextAside, name, data)
}

func (p *passStep) end() error {
	if p.ends != nil && !p.whole {
		return streamCut(errors.New("the stream ended without its end marker"))
	}
	return nil
}

// convertStep decodes upstream events into IR and re-encodes them for the
// client, one by one.
type convertStep struct {
	dec protocol.StreamDecoder
	enc protocol.StreamEncoder
	// model fills a Start that names none; prompt is the relay's count of
	// the input tokens.
	model  string
	prompt int
	tally  *streamTally
	// emitFn is emit bound once: a method value made per event would
	// allocate per event.
	emitFn func(ir.Event) error
	// out, when set, is the sink the encoder writes to: told of the first
	// delta (sink.textOut).
	out *sink
}

func newConvertStep(dec protocol.StreamDecoder, enc protocol.StreamEncoder, model string, prompt int, tally *streamTally) *convertStep {
	c := &convertStep{dec: dec, enc: enc, model: model, prompt: prompt, tally: tally}
	c.emitFn = c.emit
	return c
}

func (c *convertStep) event(name string, data []byte) error {
	return c.dec.Decode(name, data, c.emitFn)
}

func (c *convertStep) end() error {
	if err := c.dec.Finish(c.emitFn); err != nil {
		return streamCut(err)
	}
	return nil
}

func (c *convertStep) emit(ev ir.Event) error {
	switch ev.Type {
	case ir.EventUsage:
		if ev.Usage != nil {
			c.tally.usage.Merge(*ev.Usage)
		}
	case ir.EventDelta:
		if err := c.enc.Encode(ev); err != nil {
			return err
		}
		// Kept once encoded: a client that leaves is billed what it got.
		c.tally.answer.addText(ev.Text)
		c.tally.answer.addText(ev.ArgumentsDelta)
		if c.out != nil && !c.out.textSent && ev.Text != "" {
			c.out.textOut()
		}
		return nil
	case ir.EventStart:
		return c.start(ev)
	case ir.EventDone:
		// The client's final usage must show the input the call is billed for.
		if c.tally.usage.InputTokens == 0 && c.prompt > 0 {
			if err := c.encodeInput(c.tally.usage); err != nil {
				return err
			}
		}
	}
	return c.enc.Encode(ev)
}

// start sends the estimated input right after Start: clients that read input
// tokens only from the stream's first event (LangChain's Anthropic client
// reads message_start) see the estimate, and a count the upstream reports
// later replaces it.
func (c *convertStep) start(ev ir.Event) error {
	if ev.Model == "" {
		ev.Model = c.model
	}
	if err := c.enc.Encode(ev); err != nil || c.prompt <= 0 {
		return err
	}
	return c.encodeInput(ir.Usage{})
}

func (c *convertStep) encodeInput(u ir.Usage) error {
	u.InputTokens = c.prompt
	return c.enc.Encode(ir.Event{Type: ir.EventUsage, Usage: &u})
}

// namesNonNull reports whether data names a member starting with name
// whose value is not null: with usageName, a usage member ("usage",
// "usageMetadata"); every dialect reads usage only from such a member
// holding an object, so an event without one carries none (OpenAI's chunks
// name "usage":null on every chunk but the last).
//
// name is spelled without its opening quote, which is checked where name
// is found: bytes.Index steps through every occurrence of a pattern's
// first byte, and a quote is the commonest byte of JSON (as in the OpenAI
// dialect's own sniffers).
func namesNonNull(data, name []byte) bool {
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], name)
		if i < 0 {
			return false
		}
		at := off + i
		off = at + len(name)
		if at > 0 && data[at-1] == '"' && !bytes.HasPrefix(data[off:], nullValue) {
			return true
		}
	}
	return false
}

var (
	usageName  = []byte(`usage`)
	finishName = []byte(`finish_reason`)
	nullValue  = []byte(`":null`)
)
