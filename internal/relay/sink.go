package relay

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// streamHost is what the stream pump needs from the call it serves. The chat
// call and the endpoint call satisfy it, and so can one admitted-call core:
// the pump never sees a call's other state.
type streamHost interface {
	// answerStarted is called once, just before the first byte is written:
	// from then on the call must not try another channel.
	answerStarted()
}

// answerStarted: once a byte reached the client there is no other attempt.
func (c *callCore) answerStarted() { c.wrote = true }

// sink is the one writer of a streamed answer. It frames encoded events for
// the client (SSE, or the elements of one JSON array for the
// alternate-native stream without alt=sse), writes the headers before the
// first event, and flushes when the pump says no upstream bytes are waiting.
// It implements protocol.EventSink, so encoders write straight into it.
type sink struct {
	w    http.ResponseWriter
	fl   http.Flusher
	host streamHost
	// buf holds the framed events since the last flush; nil when none
	// are held (see heldBufs).
	buf *bytes.Buffer
	// jsonArray frames events as elements of one JSON array.
	jsonArray bool
	// contentType, when set, makes the answer raw bytes of that type
	// (written with Raw), with the upstream's Content-Disposition.
	contentType, disposition string
	started                  bool
	// flushed is set once a flush reached the ResponseWriter: the
	// headers are out, and writing no longer goes aside.
	flushed bool
	// pending is true when events were written since the last flush.
	pending bool
	// textSent is set once an event carrying answer text was flushed.
	textSent bool
	n        int
	// err is the first write error: the client went away.
	err error
}

func newSink(w http.ResponseWriter, host streamHost, jsonArray bool) *sink {
	fl, _ := w.(http.Flusher)
	return &sink{w: w, fl: fl, host: host, jsonArray: jsonArray}
}

// Event frames one event; it is not sent before the next flush. The events
// between two flushes are held in buf and handed to the ResponseWriter in
// one Write at the flush: each Write of net/http's takes the connection's
// lock and makes its checks, and the pump writes every event of an
// upstream read before it flushes.
func (s *sink) Event(name string, data []byte) error {
	if s.err != nil {
		return s.err
	}
	s.start()
	buf := s.held()
	if s.jsonArray {
		if s.n == 0 {
			buf.WriteByte('[')
		} else {
			buf.WriteString(",\r\n")
		}
		buf.Write(data)
	} else {
		sse.AppendEvent(buf, name, data)
	}
	s.n++
	s.pending = true
	if buf.Len() >= maxHeld {
		s.writeHeld()
	}
	return s.err
}

// maxHeld bounds the framed events held between flushes (net/http's own
// buffer before it writes a chunk is 2 KB).
const maxHeld = 2 << 10

// heldBufs lends the sinks their buffers from the first event after a
// flush to the flush: every stream writes some, and an open stream waiting
// for its upstream holds none (thousands may be open). A buffer grown past
// twice maxHeld by one large event goes to the collector. A new one starts
// at the size a fast stream's read fills, so it is not grown step by step
// after each collection has emptied the pool.
var heldBufs = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, maxHeld+maxHeld/2)) }}

// held is the buffer of the events since the last flush.
func (s *sink) held() *bytes.Buffer {
	if s.buf == nil {
		s.buf = heldBufs.Get().(*bytes.Buffer)
	}
	return s.buf
}

// writeHeld hands the held events to the ResponseWriter and returns the
// buffer.
func (s *sink) writeHeld() {
	if s.buf == nil {
		return
	}
	if s.buf.Len() > 0 && s.err == nil {
		s.write(s.buf.Bytes())
	}
	if s.buf.Cap() <= 2*maxHeld {
		s.buf.Reset()
		heldBufs.Put(s.buf)
	}
	s.buf = nil
}

// Raw writes bytes as they are (a binary answer); like Event, they are not
// sent before the next flush.
func (s *sink) Raw(data []byte) error {
	if s.err != nil {
		return s.err
	}
	s.start()
	s.writeHeld()
	if s.err != nil {
		return s.err
	}
	s.write(data)
	s.n++
	s.pending = true
	return s.err
}

// start writes the headers once; the content type follows the framing.
func (s *sink) start() {
	if s.started {
		return
	}
	s.started = true
	s.host.answerStarted()
	h := s.w.Header()
	switch {
	case s.contentType != "":
		h.Set("Content-Type", s.contentType)
		if s.disposition != "" {
			h.Set("Content-Disposition", s.disposition)
		}
	case s.jsonArray:
		h.Set("Content-Type", "application/json")
	default:
		// The values are shared by every event stream's header: Set
		// would allocate a slice for each, three a stream. Nothing
		// writes a header's values in place, and Add appends to a full
		// slice by copying it.
		h["Content-Type"] = eventStreamType
		h["Cache-Control"] = noCache
		// Proxies such as nginx would otherwise buffer the stream.
		h["X-Accel-Buffering"] = noBuffering
	}
	s.w.WriteHeader(http.StatusOK)
}

var (
	eventStreamType = []string{"text/event-stream"}
	noCache         = []string{"no-cache"}
	noBuffering     = []string{"no"}
)

// write hands b to the ResponseWriter. Until the first flush it does so
// aside: net/http writes the headers at the first write that fills its
// buffer or at the first flush, 3.9 KB below the call, which on the
// handler's stack would double it for as long as the stream is open.
func (s *sink) write(b []byte) {
	if s.flushed {
		_, s.err = s.w.Write(b)
		return
	}
	aside(func() { _, s.err = s.w.Write(b) })
}

// flush sends what was written since the last flush. The first one runs
// aside as a whole (the held events' write and the flush that sends the
// headers with them), so it costs one goroutine, not two.
func (s *sink) flush() {
	if !s.pending {
		s.writeHeld()
		return
	}
	if !s.flushed {
		aside(s.flushNow)
		return
	}
	s.flushNow()
}

// flushNow is flush, with something pending, on the goroutine it runs on.
func (s *sink) flushNow() {
	s.flushed = true
	s.writeHeld()
	if s.fl != nil {
		s.fl.Flush()
	}
	s.pending = false
}

// textOut is told that the event just written carries answer text. The
// first such event is sent at once, with everything before it, instead of
// after the rest of its upstream read: a client's first token then waits
// for the gateway's first event, not for a whole batch of them (a bare
// proxy copies a read out in one go; the pump handles each of its events).
// Later events wait for the pump's next flush, as before.
func (s *sink) textOut() {
	if !s.textSent {
		s.textSent = true
		s.flush()
	}
}

// textOutHere is textOut for a caller already aside: the flush does not go
// aside again.
func (s *sink) textOutHere() {
	if !s.textSent {
		s.textSent = true
		if s.pending {
			s.flushNow()
		} else {
			s.writeHeld()
		}
	}
}

// end ends the answer as close does, but leaves what is still buffered to
// net/http: the handler returns right after, and the server then sends it
// with the chunked body's terminator in one write instead of two, a system
// call fewer per stream. By the time the client has the last byte the
// call is settled and its concurrency slots are released.
func (s *sink) end() {
	s.start()
	if s.jsonArray && s.err == nil {
		if s.n == 0 {
			s.held().WriteByte('[')
		}
		s.held().WriteByte(']')
		s.pending = true
	}
	s.writeHeld()
}

// close ends the answer: an upstream stream that produced no event still
// gets a well-formed empty answer, and a JSON array its closing bracket.
func (s *sink) close() {
	s.end()
	s.flush()
}
