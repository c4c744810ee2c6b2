package relay

import (
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// failoverEncoder stands between a stream's decoder and the client's
// encoder of a model with stream_failover. While the first upstream
// streams it notes what the client was sent (the open blocks, the text);
// once a continuation streams (cont) it makes the second upstream's events
// one answer with the first's: no second start, the open text block
// continued, later blocks numbered on, the usage the call is billed for.
type failoverEncoder struct {
	enc protocol.StreamEncoder
	// open are the blocks started and not stopped, by index.
	open map[int]ir.BlockKind
	next int
	text strings.Builder
	// stopped: the first upstream sent its stop reason, so the answer is
	// whole in substance and nothing is continued.
	stopped bool

	cont bool
	// join is the open text block the continuation's first text block
	// continues (-1: none); mapped renumbers the continuation's blocks.
	join   int
	mapped map[int]int
	// final is the usage the client is shown before the end.
	final func() ir.Usage
}

func newFailoverEncoder(enc protocol.StreamEncoder) *failoverEncoder {
	return &failoverEncoder{enc: enc, open: map[int]ir.BlockKind{}, join: -1}
}

// Encode notes or renumbers ev and passes it on.
func (f *failoverEncoder) Encode(ev ir.Event) error {
	if f.cont {
		var pass bool
		if ev, pass = f.continued(ev); !pass {
			return nil
		}
	}
	switch ev.Type {
	case ir.EventBlockStart:
		f.open[ev.Index] = ev.Block
		f.next = max(f.next, ev.Index+1)
	case ir.EventBlockStop:
		delete(f.open, ev.Index)
	case ir.EventDelta:
		if _, ok := f.open[ev.Index]; !ok {
			f.open[ev.Index] = ev.Block
			f.next = max(f.next, ev.Index+1)
		}
		if ev.Block == ir.BlockText || ev.Block == 0 {
			f.text.WriteString(ev.Text)
		}
	case ir.EventStop:
		f.stopped = !f.cont
	}
	return f.enc.Encode(ev)
}

// resumable says whether the answer may be continued elsewhere: it was
// cut before its stop reason, it has text to continue from, and only a
// text block (or none) is open — never a tool call or reasoning under way.
func (f *failoverEncoder) resumable() bool {
	if f.stopped || f.text.Len() == 0 {
		return false
	}
	for _, k := range f.open {
		if k != ir.BlockText && k != 0 {
			return false
		}
	}
	return true
}

// beginContinuation switches to relaying a continuation.
func (f *failoverEncoder) beginContinuation(final func() ir.Usage) {
	f.cont, f.final, f.mapped = true, final, map[int]int{}
	for i, k := range f.open {
		if k == ir.BlockText || k == 0 {
			f.join = i
		}
	}
}

// continued renumbers one continuation event; pass is false for events
// the client must not see twice (the start, the joined block's start, the
// second upstream's own usage).
func (f *failoverEncoder) continued(ev ir.Event) (ir.Event, bool) {
	switch ev.Type {
	case ir.EventStart, ir.EventUsage:
		return ev, false
	case ir.EventDone:
		if f.final != nil {
			u := f.final()
			_ = f.enc.Encode(ir.Event{Type: ir.EventUsage, Usage: &u})
		}
		return ev, true
	case ir.EventBlockStart, ir.EventDelta, ir.EventBlockStop:
		i, ok := f.mapped[ev.Index]
		if !ok {
			if (ev.Block == ir.BlockText || ev.Block == 0) && f.join >= 0 {
				i, f.join = f.join, -1
				f.mapped[ev.Index] = i
				ev.Index = i
				return ev, ev.Type != ir.EventBlockStart
			}
			i = f.next
			f.mapped[ev.Index] = i
		}
		ev.Index = i
	}
	return ev, true
}
