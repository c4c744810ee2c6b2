package gemini

import (
	"bytes"
	"encoding/json"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// streamDecoder turns upstream chunks (each a whole GenerateContentResponse
// whose text parts are deltas) into IR events. It holds only the open block
// and the latest cumulative usage, never the answer.
type streamDecoder struct {
	emit     func(ir.Event) error
	started  bool
	stopped  bool
	done     bool
	open     ir.BlockKind // 0 when no block is open
	next     int          // index of the next block
	called   bool
	usage    ir.Usage
	hasUsage bool
	sentUse  bool
	id       string
	chunkNo  int
}

// Decode handles one event's data. The data may also be a JSON array of
// chunks, the framing of the non-SSE stream.
func (d *streamDecoder) Decode(_ string, data []byte, emit func(ir.Event) error) error {
	d.emit = emit
	data = bytes.TrimSpace(data)
	if len(data) == 0 || d.done {
		return nil
	}
	if data[0] == '[' {
		var chunks []json.RawMessage
		if err := json.Unmarshal(data, &chunks); err != nil {
			return badUpstream(err)
		}
		for _, c := range chunks {
			if err := d.chunk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return d.chunk(data)
}

func (d *streamDecoder) chunk(data []byte) error {
	var w responseWire
	if err := json.Unmarshal(data, &w); err != nil {
		return badUpstream(err)
	}
	if w.Error != nil {
		return errorFromDetail(w.Error.Code, w.Error)
	}
	d.chunkNo++
	if err := d.start(&w); err != nil {
		return err
	}
	if w.UsageMetadata != nil {
		if err := d.noteUsage(usageFromWire(w.UsageMetadata)); err != nil {
			return err
		}
	}
	if len(w.Candidates) == 0 {
		if w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" {
			return d.stop(ir.StopContentFilter)
		}
		return nil
	}
	c := w.Candidates[0]
	if c.Content != nil {
		for j, p := range c.Content.Parts {
			if err := d.part(p, j); err != nil {
				return err
			}
		}
	}
	if c.FinishReason != "" {
		return d.stop(stopReason(c.FinishReason, d.called))
	}
	return nil
}

func (d *streamDecoder) start(w *responseWire) error {
	if d.started {
		return nil
	}
	d.started, d.id = true, w.ResponseID
	return d.emit(ir.Event{Type: ir.EventStart, ID: w.ResponseID, Model: w.ModelVersion})
}

// noteUsage reports the first usage at once (input tokens are known early)
// and keeps later ones for the end, as every chunk repeats the running total.
func (d *streamDecoder) noteUsage(u ir.Usage) error {
	d.usage.Merge(u)
	d.hasUsage = true
	if d.sentUse {
		return nil
	}
	d.sentUse = true
	cp := d.usage
	return d.emit(ir.Event{Type: ir.EventUsage, Usage: &cp})
}

func (d *streamDecoder) part(p partWire, j int) error {
	if d.stopped {
		return nil
	}
	if p.Thought && p.Text != nil {
		if err := d.delta(ir.BlockThinking, *p.Text); err != nil {
			return err
		}
		return d.signature(p.ThoughtSignature)
	}
	if keepSignature(p, d.open == ir.BlockThinking) {
		if d.open != ir.BlockThinking {
			if err := d.openBlock(ir.BlockThinking, ir.Event{}); err != nil {
				return err
			}
		}
		if err := d.signature(p.ThoughtSignature); err != nil {
			return err
		}
	}
	switch {
	case p.FunctionCall != nil:
		return d.toolCall(p.FunctionCall, j)
	case p.Text != nil && *p.Text != "":
		return d.delta(ir.BlockText, *p.Text)
	}
	// Inline media and code-execution parts have no stream block in the IR.
	return nil
}

func (d *streamDecoder) signature(sig string) error {
	if sig == "" {
		return nil
	}
	return d.emit(ir.Event{Type: ir.EventDelta, Index: d.next - 1, Block: ir.BlockThinking, Signature: tagSignature(sig)})
}

// delta appends text to the open block of that kind, opening one if needed.
func (d *streamDecoder) delta(kind ir.BlockKind, text string) error {
	if d.open != kind {
		if err := d.openBlock(kind, ir.Event{}); err != nil {
			return err
		}
	}
	if text == "" {
		return nil
	}
	return d.emit(ir.Event{Type: ir.EventDelta, Index: d.next - 1, Block: kind, Text: text})
}

// toolCall emits a whole call as one block: it arrives complete in one part.
func (d *streamDecoder) toolCall(fc *functionCallWire, j int) error {
	d.called = true
	// The chunk number keeps synthesized ids unique within the answer.
	call := toolCallFromWire(fc, d.id+"/"+itoa(d.chunkNo), j)
	start := ir.Event{ToolCallID: call.ID, ToolName: call.Name}
	if err := d.openBlock(ir.BlockToolCall, start); err != nil {
		return err
	}
	idx := d.next - 1
	if err := d.emit(ir.Event{Type: ir.EventDelta, Index: idx, Block: ir.BlockToolCall, ArgumentsDelta: call.Arguments}); err != nil {
		return err
	}
	return d.closeBlock()
}

func (d *streamDecoder) openBlock(kind ir.BlockKind, start ir.Event) error {
	if err := d.closeBlock(); err != nil {
		return err
	}
	start.Type, start.Index, start.Block = ir.EventBlockStart, d.next, kind
	d.open = kind
	d.next++
	return d.emit(start)
}

func (d *streamDecoder) closeBlock() error {
	if d.open == 0 {
		return nil
	}
	kind := d.open
	d.open = 0
	return d.emit(ir.Event{Type: ir.EventBlockStop, Index: d.next - 1, Block: kind})
}

func (d *streamDecoder) stop(r ir.StopReason) error {
	if d.stopped {
		return nil
	}
	if err := d.closeBlock(); err != nil {
		return err
	}
	d.stopped = true
	return d.emit(ir.Event{Type: ir.EventStop, StopReason: r})
}

// Finish closes the stream: the final cumulative usage, then Done. A
// stream without a single chunk, or without a finishReason, is an upstream
// failure.
func (d *streamDecoder) Finish(emit func(ir.Event) error) error {
	d.emit = emit
	if d.done {
		return nil
	}
	if !d.started {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "empty_stream",
			Message: "the upstream stream ended before any data", Retry: ir.RetryNext}
	}
	if !d.stopped {
		// finishReason is the stream's only end marker: without it the
		// answer was cut off, never whole (CONTRACT §22).
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken",
			Message: "the upstream stream ended before the answer was complete", Retry: ir.RetryNext}
	}
	if d.hasUsage {
		u := d.usage
		if err := emit(ir.Event{Type: ir.EventUsage, Usage: &u}); err != nil {
			return err
		}
	}
	d.done = true
	return emit(ir.Event{Type: ir.EventDone})
}
