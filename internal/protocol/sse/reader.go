// Package sse reads and writes server-sent event streams as the WHATWG
// specification frames them: LF, CR or CRLF line ends, multi-line data,
// comments, event names and ids. The reader reuses its buffers, so a relay
// pumping thousands of chunks does not allocate per event.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// DefaultMaxEventSize bounds one event (all its lines) so a hostile or broken
// upstream cannot make the gateway buffer without limit.
const DefaultMaxEventSize = 1 << 20

// ErrEventTooLarge is returned when an event exceeds the reader's limit.
var ErrEventTooLarge = errors.New("sse: event exceeds size limit")

// Event is one dispatched event. Its slices are only valid until the next
// call to Next; copy what must outlive it.
type Event struct {
	Name []byte // empty means "message"
	ID   []byte
	Data []byte
	// Retry is the reconnection time in ms, or -1 when not given.
	Retry int
}

// Reader parses events from a stream.
type Reader struct {
	br      *bufio.Reader
	max     int
	data    []byte
	name    []byte
	id      []byte
	line    []byte
	hasData bool
	lastCR  bool
	ev      Event
}

// NewReader returns a reader that rejects events larger than max bytes
// (DefaultMaxEventSize when max <= 0).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	rd := readers.Get().(*Reader)
	rd.br.Reset(r)
	rd.max = max
	return rd
}

// readers keeps released readers with their buffer: a gateway under load
// opens and ends streams all the time.
var readers = sync.Pool{New: func() any { return &Reader{br: bufio.NewReaderSize(nil, readBufferSize)} }}

// readBufferSize is what one open stream holds while it waits for its
// upstream. An HTTP/1 body is read through the transport's own 4 KiB
// buffer, so one read rarely returns more than that and a larger buffer
// here would only sit empty, for each of thousands of open streams. Lines
// longer than the buffer are still read whole (into line).
const readBufferSize = 4 << 10

// maxPooledEvent leaves a reader that grew for a rare huge event to the
// collector.
const maxPooledEvent = 64 << 10

// Release returns the reader for reuse by a later stream. Neither it nor
// an event it returned may be used afterwards.
func (r *Reader) Release() {
	r.br.Reset(nil)
	if cap(r.data) > maxPooledEvent || cap(r.line) > maxPooledEvent {
		return
	}
	r.data, r.name, r.id, r.line = r.data[:0], r.name[:0], r.id[:0], r.line[:0]
	r.hasData, r.lastCR, r.ev = false, false, Event{}
	readers.Put(r)
}

// Next returns the next event, or io.EOF when the stream ends. An event that
// was not terminated by a blank line before EOF is discarded, as browsers do.
func (r *Reader) Next() (*Event, error) {
	r.data, r.name, r.hasData = r.data[:0], r.name[:0], false
	retry := -1
	size := 0
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		done, err := r.take(line, &size, &retry)
		if err != nil {
			return nil, err
		}
		if done {
			r.ev = Event{Name: r.name, ID: r.id, Data: r.data, Retry: retry}
			return &r.ev, nil
		}
	}
}

// take applies one line to the event under construction (size and retry
// are the event's so far); done is a blank line ending an event with data.
func (r *Reader) take(line []byte, size, retry *int) (done bool, err error) {
	if len(line) == 0 {
		if !r.hasData {
			// The standard resets the event name when a blank line ends
			// an event that carried no data.
			r.name = r.name[:0]
		}
		return r.hasData, nil
	}
	*size += len(line)
	if *size > r.max {
		return false, ErrEventTooLarge
	}
	*retry = r.field(line, *retry)
	return false, nil
}

// NextEvent is Next as the relay's protocol.EventReader: name and data only.
func (r *Reader) NextEvent() (name, data []byte, err error) {
	ev, err := r.Next()
	if err != nil {
		return nil, nil, err
	}
	return ev.Name, ev.Data, nil
}

// Buffered reports how many bytes have been read from the stream but not yet
// parsed; it is 0 right after an event whose bytes were the last to arrive,
// in LF, CRLF or CR framing. A relay flushes to its client when this is
// zero: events that arrived together leave together, and no event waits for
// more input.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// field applies one "name: value" line to the event under construction.
func (r *Reader) field(line []byte, retry int) int {
	if line[0] == ':' {
		return retry
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.name = append(r.name[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.id = append(r.id[:0], value...)
		}
	case "retry":
		if n, ok := parseDigits(value); ok {
			return n
		}
	}
	return retry
}

func parseDigits(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// readLine returns one line without its terminator. It treats CR, LF and
// CRLF as line ends, remembering a trailing CR so a CRLF split across reads
// is not seen as two line ends. It scans the buffered bytes with IndexByte
// instead of reading byte by byte: the relay reads every upstream event
// through here.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	if r.lastCR {
		r.lastCR = false
		if b, err := r.br.Peek(1); err == nil && b[0] == '\n' {
			_, _ = r.br.Discard(1)
		}
	}
	for {
		buf, err := r.peekBuffered()
		if err != nil {
			if err == io.EOF && len(r.line) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		end, isCR := lineEnd(buf)
		if end < 0 {
			if len(r.line)+len(buf) > r.max {
				return nil, ErrEventTooLarge
			}
			r.line = append(r.line, buf...)
			_, _ = r.br.Discard(len(buf))
			continue
		}
		if len(r.line)+end > r.max {
			return nil, ErrEventTooLarge
		}
		r.line = append(r.line, buf[:end]...)
		_, _ = r.br.Discard(end + 1)
		r.lastCR = isCR && !r.discardBufferedLF(buf[end+1:])
		return r.line, nil
	}
}

// discardBufferedLF drops the LF of a CRLF when it has already arrived
// (rest is what was buffered after the CR). Leaving it buffered would make an
// event framed with CRLF look unfinished to Buffered, so a relay would hold
// that event back until the next one arrived. It never waits for input: an LF
// still on its way is dropped by the next read (lastCR).
func (r *Reader) discardBufferedLF(rest []byte) bool {
	if len(rest) == 0 || rest[0] != '\n' {
		return false
	}
	_, _ = r.br.Discard(1)
	return true
}

// peekBuffered returns the buffered bytes, reading more when none are.
func (r *Reader) peekBuffered() ([]byte, error) {
	if r.br.Buffered() == 0 {
		if _, err := r.br.Peek(1); err != nil {
			return nil, err
		}
	}
	return r.br.Peek(r.br.Buffered())
}

// lineEnd finds the first CR or LF in buf; isCR tells which it was.
func lineEnd(buf []byte) (int, bool) {
	lf := bytes.IndexByte(buf, '\n')
	limit := buf
	if lf >= 0 {
		limit = buf[:lf]
	}
	if cr := bytes.IndexByte(limit, '\r'); cr >= 0 {
		return cr, true
	}
	return lf, false
}
