package relay

import (
	"context"
	"errors"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// guardEncoder sits between a stream's IR events and the client's encoder
// when a guardrail checks the answer: text, reasoning and tool-call
// arguments are held in the guardrail window and released only once the
// window behind them passed, so a match split across chunks is redacted,
// or the stream ends with the dialect's error event, before any of it
// leaves. Events that carry no text and do not end a block (start, usage,
// ping) pass at once; any other first releases what is held, checked as a
// whole.
type guardEncoder struct {
	ctx context.Context
	enc protocol.StreamEncoder
	win *guardrail.Window
	// fail ends the client's stream with its dialect's error event.
	fail func(*ir.Error)
	// last is the block the held text belongs to.
	last    ir.Event
	holding bool
	blocked bool
}

// errGuardStop ends the pump once a guardrail blocked the answer and the
// error event was sent: a deliberate end, billed on what the upstream
// produced, never logged or told to the client as a broken stream.
var errGuardStop = errors.New("relay: a guardrail ended the stream")

// guardStopped reports whether a stream's pump ended on a guardrail block.
func guardStopped(err error) bool { return errors.Is(err, errGuardStop) }

// dialectFail is the fail of a chat dialect: its stream error event (the
// messages wire's "error" event, an error object elsewhere).
func dialectFail(s *sink, codec protocol.Codec) func(*ir.Error) {
	return func(e *ir.Error) {
		name, data := "", codec.EncodeError(e)
		if fe, ok := codec.(protocol.StreamErrorEncoder); ok {
			name, data = fe.EncodeStreamError(e)
		}
		_ = s.Event(name, data)
		s.flush()
	}
}

// deltaText is the windowed text of a delta event: text and reasoning, or
// a fragment of a tool call's arguments.
func deltaText(ev *ir.Event) *string {
	if ev.Type != ir.EventDelta {
		return nil
	}
	switch ev.Block {
	case ir.BlockText, ir.BlockThinking, 0:
		if ev.Text != "" {
			return &ev.Text
		}
	case ir.BlockToolCall:
		if ev.ArgumentsDelta != "" {
			return &ev.ArgumentsDelta
		}
	}
	return nil
}

func (g *guardEncoder) Encode(ev ir.Event) error {
	if g.blocked {
		return errGuardStop
	}
	switch ev.Type {
	case ir.EventStart, ir.EventUsage, ir.EventPing:
		return g.enc.Encode(ev)
	}
	if deltaText(&ev) != nil {
		return g.write(ev)
	}
	if err := g.flush(); err != nil {
		return err
	}
	return g.enc.Encode(ev)
}

// write passes a delta's text through the window.
func (g *guardEncoder) write(ev ir.Event) error {
	if g.holding && (ev.Index != g.last.Index || ev.Block != g.last.Block) {
		if err := g.flush(); err != nil {
			return err
		}
	}
	text := deltaSlot(&ev)
	out, b := g.win.Write(g.ctx, *text)
	g.last, g.holding = ev, true
	if b != nil {
		return g.block(b)
	}
	if out == "" {
		return nil
	}
	*text = out
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
	*deltaSlot(&ev) = out
	return g.enc.Encode(ev)
}

// deltaSlot is where a delta event of ev's block carries its text.
func deltaSlot(ev *ir.Event) *string {
	if ev.Block == ir.BlockToolCall {
		return &ev.ArgumentsDelta
	}
	return &ev.Text
}

// block ends the client's stream with the dialect's error event and stops
// the pump; the call is billed on what the upstream produced.
func (g *guardEncoder) block(b *guardrail.Block) error {
	g.blocked = true
	g.fail(blockedError(b))
	return errGuardStop
}
