package sse

import (
	"io"
	"sync"
)

// Decoder parses the same events as Reader from bytes its owner reads for
// it (Fill) and takes out as they complete (Next), never waiting for
// input. A relay reading its upstream this way waits for the network at
// the top of its own loop: with Reader the wait sits under a chain of
// parser and buffer calls, and each of thousands of open streams walks that
// chain's cold stack frames again every time a chunk wakes it.
type Decoder struct {
	buf  []byte // read and not yet parsed: buf[off:]
	off  int
	ev   Reader // the event under construction; its br is unused
	size int    // bytes of the event's lines so far
	// retry is the event's retry field, parsed as Reader does and dropped:
	// a relay has no use for it.
	retry   int
	started bool // an event was returned: the next Next starts a new one
}

var decoders = sync.Pool{New: func() any { return &Decoder{buf: make([]byte, 0, readBufferSize)} }}

// NewDecoder returns a decoder that rejects events larger than max bytes
// (DefaultMaxEventSize when max <= 0).
func NewDecoder(max int) *Decoder {
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	d := decoders.Get().(*Decoder)
	d.ev.max, d.retry = max, -1
	return d
}

// Release returns the decoder for reuse by a later stream. Neither it nor
// an event it returned may be used afterwards.
func (d *Decoder) Release() {
	if cap(d.ev.data) > maxPooledEvent || cap(d.ev.line) > maxPooledEvent {
		return
	}
	d.buf, d.off, d.size, d.started = d.buf[:0], 0, 0, false
	d.ev.data, d.ev.name, d.ev.id, d.ev.line = d.ev.data[:0], d.ev.name[:0], d.ev.id[:0], d.ev.line[:0]
	d.ev.hasData, d.ev.lastCR = false, false
	decoders.Put(d)
}

// Fill reads from r once, into the decoder. Once Next has reported
// that it needs more input every byte before is parsed (a line cut off is
// kept apart), so the buffer starts empty; bytes still unparsed are kept.
func (d *Decoder) Fill(r io.Reader) (int, error) {
	kept := copy(d.buf[:cap(d.buf)], d.buf[d.off:])
	if kept == cap(d.buf) {
		d.buf = append(d.buf[:kept], make([]byte, kept)...)
	}
	d.off = 0
	// As bufio does: a reader that keeps returning nothing is broken, and
	// the relay must not spin on it.
	for range 100 {
		n, err := r.Read(d.buf[kept:cap(d.buf)])
		if n > 0 || err != nil {
			d.buf = d.buf[:kept+n]
			return n, err
		}
	}
	d.buf = d.buf[:kept]
	return 0, io.ErrNoProgress
}

// Next returns the next complete event among the bytes read so far, or
// ok false when it needs more input. name and data are valid until the
// next call to Next.
func (d *Decoder) Next() (name, data []byte, ok bool, err error) {
	if d.started {
		d.started, d.size, d.retry = false, 0, -1
		d.ev.data, d.ev.name, d.ev.hasData = d.ev.data[:0], d.ev.name[:0], false
	}
	for {
		line, got, err := d.nextLine()
		if err != nil || !got {
			return nil, nil, false, err
		}
		done, err := d.ev.take(line, &d.size, &d.retry)
		if err != nil {
			return nil, nil, false, err
		}
		if done {
			d.started = true
			return d.ev.name, d.ev.data, true, nil
		}
	}
}

// End is what the stream's end means after the last complete event: a
// line cut off by it is an unexpected end, as for Reader; an event whose
// blank line never came is dropped, as browsers do.
func (d *Decoder) End() error {
	if len(d.ev.line) > 0 {
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// nextLine returns one whole line without its terminator, got false when
// the bytes read so far end inside one (kept for the next read).
func (d *Decoder) nextLine() (line []byte, got bool, err error) {
	rest := d.buf[d.off:]
	if d.ev.lastCR && len(rest) > 0 {
		d.ev.lastCR = false
		if rest[0] == '\n' {
			d.off++
			rest = rest[1:]
		}
	}
	end, isCR := lineEnd(rest)
	if end < 0 {
		if len(d.ev.line)+len(rest) > d.ev.max {
			return nil, false, ErrEventTooLarge
		}
		d.ev.line = append(d.ev.line, rest...)
		d.off = len(d.buf)
		return nil, false, nil
	}
	if len(d.ev.line)+end > d.ev.max {
		return nil, false, ErrEventTooLarge
	}
	line = rest[:end]
	if len(d.ev.line) > 0 {
		line = append(d.ev.line, line...)
		d.ev.line = line[:0]
	}
	d.off += end + 1
	if isCR {
		if d.off < len(d.buf) && d.buf[d.off] == '\n' {
			d.off++
		} else if d.off == len(d.buf) {
			d.ev.lastCR = true
		}
	}
	return line, true, nil
}
