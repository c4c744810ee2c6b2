package relay

import (
	"sync"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// responseEvents is a whole answer as the stream events that would have
// carried it: how a cached answer is replayed to a client that streams, in
// any dialect, whatever form the original took.
func responseEvents(res *ir.Response, emit func(ir.Event) error) error {
	if err := emit(ir.Event{Type: ir.EventStart, ID: res.ID, Model: res.Model}); err != nil {
		return err
	}
	for i, p := range res.Content {
		start := ir.Event{Type: ir.EventBlockStart, Index: i}
		delta := ir.Event{Type: ir.EventDelta, Index: i}
		switch p.Kind {
		case ir.PartText:
			start.Block, delta.Block, delta.Text = ir.BlockText, ir.BlockText, p.Text
		case ir.PartThinking:
			start.Block, delta.Block, delta.Text, delta.Signature = ir.BlockThinking, ir.BlockThinking, p.Thinking.Text, p.Thinking.Signature
		case ir.PartToolCall:
			start.Block, delta.Block = ir.BlockToolCall, ir.BlockToolCall
			start.ToolCallID, start.ToolName, delta.ArgumentsDelta = p.ToolCall.ID, p.ToolCall.Name, p.ToolCall.Arguments
		default:
			continue
		}
		if err := emitAll(emit, start, delta, ir.Event{Type: ir.EventBlockStop, Index: i, Block: start.Block}); err != nil {
			return err
		}
	}
	u := res.Usage
	return emitAll(emit, ir.Event{Type: ir.EventStop, StopReason: res.StopReason, StopSequence: res.StopSequence},
		ir.Event{Type: ir.EventUsage, Usage: &u}, ir.Event{Type: ir.EventDone})
}

func emitAll(emit func(ir.Event) error, evs ...ir.Event) error {
	for _, ev := range evs {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// answerRecorder builds the whole answer of a stream from its IR events,
// for the response cache. It gives up (and keeps nothing) past limit bytes,
// so a long answer costs the cache no more memory than it may store.
type answerRecorder struct {
	limit int
	size  int
	over  bool
	done  bool
	res   ir.Response
	// at maps a stream block index to its part in res.Content.
	at map[int]int
	// step holds the events not decoded into it yet (nil when none).
	step *recordStep
}

func (r *answerRecorder) add(ev ir.Event) error {
	if r.over {
		return nil
	}
	r.size += len(ev.Text) + len(ev.ArgumentsDelta) + len(ev.Signature)
	if r.size > r.limit {
		r.over, r.res = true, ir.Response{}
		return nil
	}
	switch ev.Type {
	case ir.EventStart:
		r.res.ID, r.res.Model = ev.ID, ev.Model
	case ir.EventBlockStart:
		r.blockStart(ev)
	case ir.EventDelta:
		r.delta(ev)
	case ir.EventStop:
		r.res.StopReason, r.res.StopSequence = ev.StopReason, ev.StopSequence
	case ir.EventUsage:
		if ev.Usage != nil {
			r.res.Usage.Merge(*ev.Usage)
		}
	case ir.EventDone:
		r.done = true
	}
	return nil
}

func (r *answerRecorder) blockStart(ev ir.Event) {
	if r.at == nil {
		r.at = map[int]int{}
	}
	p := ir.Part{Kind: ir.PartText}
	switch ev.Block {
	case ir.BlockThinking:
		p = ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{}}
	case ir.BlockRedactedThinking:
		p = ir.Part{Kind: ir.PartRedactedThinking, Thinking: &ir.Thinking{}}
	case ir.BlockToolCall:
		p = ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: ev.ToolCallID, Name: ev.ToolName}}
	}
	r.at[ev.Index] = len(r.res.Content)
	r.res.Content = append(r.res.Content, p)
}

func (r *answerRecorder) delta(ev ir.Event) {
	i, ok := r.at[ev.Index]
	if !ok {
		r.blockStart(ir.Event{Index: ev.Index, Block: ev.Block})
		i = r.at[ev.Index]
	}
	p := &r.res.Content[i]
	switch p.Kind {
	case ir.PartText:
		p.Text += ev.Text
	case ir.PartThinking, ir.PartRedactedThinking:
		p.Thinking.Text += ev.Text
		p.Thinking.Signature += ev.Signature
	case ir.PartToolCall:
		p.ToolCall.Arguments += ev.ArgumentsDelta
	}
}

// response is the recorded answer, nil unless the stream ended whole and
// within the bound.
func (r *answerRecorder) response() *ir.Response {
	if s := r.step; s != nil {
		// A stream that broke after its last event: end never ran.
		aside(s.decodeHeld)
		s.release()
	}
	if r.over || !r.done {
		return nil
	}
	return &r.res
}

// recordStep decodes every upstream event a second time, into the
// recorder, beside the step that relays it: only calls that may fill the
// cache pay for it. Decoding an event goes about 3 KB below the pump, which
// on the handler's stack would double it for as long as the stream is open,
// so the events are copied as they pass and decoded aside, in batches of
// recordBatch bytes and at the end: one goroutine for a short answer, in
// the same order, through the same decoder.
type recordStep struct {
	eventStep
	dec protocol.StreamDecoder
	rec *answerRecorder
	*recordBufs
}

// recordBufs are the events a recordStep has not decoded yet: their data
// one after another, each ending at its heldEvent's end. They are lent from
// the first event to the end, and sized for a batch, so a stream does not
// grow them from nothing.
type recordBufs struct {
	held   []byte
	events []heldEvent
}

var recordPool = sync.Pool{New: func() any {
	return &recordBufs{held: make([]byte, 0, recordBatch+recordBatch/2), events: make([]heldEvent, 0, 32)}
}}

type heldEvent struct {
	name string
	end  int
}

// recordBatch bounds the event bytes a recording stream holds undecoded.
const recordBatch = 4 << 10

func (s *recordStep) event(name string, data []byte) error {
	if err := s.eventStep.event(name, data); err != nil {
		return err
	}
	if s.rec.over {
		return nil // nothing more is kept; decoding would add nothing
	}
	if s.recordBufs == nil {
		s.recordBufs = recordPool.Get().(*recordBufs)
		s.rec.step = s
	}
	s.held = append(s.held, data...)
	s.events = append(s.events, heldEvent{name: name, end: len(s.held)})
	if len(s.held) >= recordBatch {
		aside(s.decodeHeld)
	}
	return nil
}

// decodeHeld decodes the held events into the recorder and empties them.
func (s *recordStep) decodeHeld() {
	if s.recordBufs == nil {
		return
	}
	start := 0
	for _, ev := range s.events {
		if err := s.dec.Decode(ev.name, s.held[start:ev.end], s.rec.add); err != nil {
			s.rec.over = true
		}
		start = ev.end
	}
	s.held, s.events = s.held[:0], s.events[:0]
}

func (s *recordStep) end() error {
	if err := s.eventStep.end(); err != nil {
		return err
	}
	aside(func() {
		s.decodeHeld()
		if err := s.dec.Finish(s.rec.add); err != nil {
			s.rec.over = true
		}
	})
	s.release()
	return nil
}

// release gives the buffers back; a buffer one large event grew past twice
// the batch goes to the collector.
func (s *recordStep) release() {
	if s.recordBufs == nil {
		return
	}
	if cap(s.held) <= 3*recordBatch {
		recordPool.Put(s.recordBufs)
	}
	s.recordBufs = nil
	s.rec.step = nil
}
