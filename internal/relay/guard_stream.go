package relay

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// guardEncoder sits between a stream's IR events and the client's encoder
// when a guardrail checks the answer: text is held in the guardrail window
// and released only once the window behind it passed, so a match split
// across chunks is redacted, or the stream ends with the dialect's error
// event, before any of it leaves. Events that carry no text and do not end
// a block (start, usage, ping) pass at once; any other first releases what
// is held, checked as a whole.
type guardEncoder struct {
	ctx     context.Context
	enc     protocol.StreamEncoder
	win     *guardrail.Window
	sink    *sink
	dialect protocol.Codec
	// last is the block the held text belongs to.
	last    ir.Event
	holding bool
	blocked bool
}

// errGuardBlocked ends the pump once the error event was sent.
var errGuardBlocked = &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "guardrail_blocked", Message: "the answer was blocked by a guardrail"}

func (g *guardEncoder) Encode(ev ir.Event) error {
	if g.blocked {
		return errGuardBlocked
	}
	switch ev.Type {
	case ir.EventStart, ir.EventUsage, ir.EventPing:
		return g.enc.Encode(ev)
	case ir.EventDelta:
		if ev.Text != "" && (ev.Block == ir.BlockText || ev.Block == ir.BlockThinking || ev.Block == 0) {
			return g.write(ev)
		}
	}
	if err := g.flush(); err != nil {
		return err
	}
	return g.enc.Encode(ev)
}

// write passes a text delta through the window.
func (g *guardEncoder) write(ev ir.Event) error {
	if g.holding && (ev.Index != g.last.Index || ev.Block != g.last.Block) {
		if err := g.flush(); err != nil {
			return err
		}
	}
	g.last, g.holding = ev, true
	out, b := g.win.Write(g.ctx, ev.Text)
	if b != nil {
		return g.block(b)
	}
	if out == "" {
		return nil
	}
	ev.Text = out
	return g.enc.Encode(ev)
}

// flush releases the held text of the current block.
func (g *guardEncoder) flush() error {
	if !g.holding {
		return nil
	}
	g.holding = false
	out, b := g.win.Flush(g.ctx)
	if b != nil {
		return g.block(b)
	}
	if out == "" {
		return nil
	}
	ev := g.last
	ev.Text = out
	return g.enc.Encode(ev)
}

// block ends the client's stream with the dialect's error event (on the
// messages wire an "error" event; elsewhere an error object) and stops the
// pump; the call is billed on what the upstream produced.
func (g *guardEncoder) block(b *guardrail.Block) error {
	g.blocked = true
	name := ""
	if g.dialect.Format() == protocol.Anthropic {
		name = "error"
	}
	_ = g.sink.Event(name, g.dialect.EncodeError(blockedError(b)))
	g.sink.flush()
	return errGuardBlocked
}
