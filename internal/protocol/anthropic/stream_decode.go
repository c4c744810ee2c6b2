package anthropic

import (
	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxStreamBlocks bounds how many content blocks one stream may open, so a
// broken upstream cannot grow the index map without limit.
const maxStreamBlocks = 4096

// streamDecoder turns upstream events into IR events as they arrive. It holds
// only per-block bookkeeping; text and tool arguments pass straight through.
type streamDecoder struct {
	started, stopped, done bool
	// blocks maps the upstream content-block index to its IR block. Blocks
	// the IR cannot carry (server tool traffic) map to a skipped entry so
	// their deltas are dropped and IR indices stay dense.
	blocks map[int]*decBlock
	// open is the block started last and not yet stopped; the upstream
	// builds one block at a time.
	open  *decBlock
	next  int
	usage wireUsage
}

type decBlock struct {
	index   int
	kind    ir.BlockKind
	skipped bool
}

func newStreamDecoder() *streamDecoder {
	return &streamDecoder{blocks: map[int]*decBlock{}}
}

func (d *streamDecoder) Decode(name string, data []byte, emit func(ir.Event) error) error {
	if d.done || len(data) == 0 {
		return nil
	}
	if !gjson.ValidBytes(data) {
		return upstreamMalformed("upstream stream event is not valid JSON")
	}
	ev := gjson.ParseBytes(data)
	typ := ev.Get("type").Str
	if typ == "" {
		typ = name
	}
	switch typ {
	case "ping":
		return emit(ir.Event{Type: ir.EventPing})
	case "error":
		return errorFromBody(0, ev)
	case "message_start":
		return d.messageStart(ev, emit)
	}
	if err := d.ensureStart(emit); err != nil {
		return err
	}
	switch typ {
	case "content_block_start":
		return d.blockStart(ev, emit)
	case "content_block_delta":
		return d.blockDelta(ev, emit)
	case "content_block_stop":
		return d.blockStop(ev, emit)
	case "message_delta":
		return d.messageDelta(ev, emit)
	case "message_stop":
		return d.finish(emit)
	}
	return nil // event types added later carry nothing the IR needs
}

func (d *streamDecoder) ensureStart(emit func(ir.Event) error) error {
	if d.started {
		return nil
	}
	d.started = true
	return emit(ir.Event{Type: ir.EventStart})
}

func (d *streamDecoder) messageStart(ev gjson.Result, emit func(ir.Event) error) error {
	msg := ev.Get("message")
	if !d.started {
		d.started = true
		start := ir.Event{Type: ir.EventStart, ID: msg.Get("id").String(), Model: msg.Get("model").String()}
		if err := emit(start); err != nil {
			return err
		}
	}
	return d.addUsage(msg.Get("usage"), emit)
}

// addUsage folds a (cumulative) usage report into the running totals and
// emits the whole picture, so a report that omits cache fields does not
// erase what message_start said about them.
func (d *streamDecoder) addUsage(u gjson.Result, emit func(ir.Event) error) error {
	if !u.IsObject() {
		return nil
	}
	w := usageFromGJSON(u)
	d.usage.InputTokens = max(d.usage.InputTokens, w.InputTokens)
	d.usage.CacheCreationInputTokens = max(d.usage.CacheCreationInputTokens, w.CacheCreationInputTokens)
	d.usage.CacheReadInputTokens = max(d.usage.CacheReadInputTokens, w.CacheReadInputTokens)
	if out := u.Get("output_tokens"); out.Exists() {
		d.usage.OutputTokens = w.OutputTokens
	}
	total := d.usage.toIR()
	return emit(ir.Event{Type: ir.EventUsage, Usage: &total})
}

func (d *streamDecoder) blockStart(ev gjson.Result, emit func(ir.Event) error) error {
	up, ok := blockIndex(ev)
	if !ok {
		return upstreamMalformed("upstream content_block_start without a valid index")
	}
	if _, seen := d.blocks[up]; seen {
		return upstreamMalformed("upstream started a content block twice")
	}
	if len(d.blocks) >= maxStreamBlocks {
		return upstreamMalformed("upstream stream has too many content blocks")
	}
	cb := ev.Get("content_block")
	kind, ok := blockKindOf(cb.Get("type").Str)
	if !ok {
		d.blocks[up] = &decBlock{skipped: true}
		return nil
	}
	if err := d.closeOpen(emit); err != nil {
		return err
	}
	b := &decBlock{index: d.next, kind: kind}
	d.blocks[up] = b
	d.open = b
	d.next++
	start := ir.Event{Type: ir.EventBlockStart, Index: b.index, Block: kind}
	switch kind {
	case ir.BlockToolCall:
		start.ToolCallID, start.ToolName = cb.Get("id").String(), cb.Get("name").String()
	case ir.BlockRedactedThinking:
		// The opaque data comes whole with the block's start; it rides in Text.
		start.Text = cb.Get("data").String()
	}
	if err := emit(start); err != nil {
		return err
	}
	return d.initialContent(b, cb, emit)
}

// initialContent forwards content a block start already carries. The
// upstream normally starts blocks empty, but nothing forbids otherwise.
func (d *streamDecoder) initialContent(b *decBlock, cb gjson.Result, emit func(ir.Event) error) error {
	delta := ir.Event{Type: ir.EventDelta, Index: b.index, Block: b.kind}
	switch b.kind {
	case ir.BlockText:
		delta.Text = cb.Get("text").String()
	case ir.BlockThinking:
		delta.Text, delta.Signature = cb.Get("thinking").String(), cb.Get("signature").String()
	case ir.BlockToolCall:
		if in := cb.Get("input"); in.IsObject() && len(in.Map()) > 0 {
			delta.ArgumentsDelta = compactRaw(in.Raw)
		}
	}
	if delta.Text == "" && delta.Signature == "" && delta.ArgumentsDelta == "" {
		return nil
	}
	return emit(delta)
}

func blockKindOf(typ string) (ir.BlockKind, bool) {
	switch typ {
	case "text":
		return ir.BlockText, true
	case "thinking":
		return ir.BlockThinking, true
	case "redacted_thinking":
		return ir.BlockRedactedThinking, true
	case "tool_use":
		return ir.BlockToolCall, true
	}
	return 0, false
}

func blockIndex(ev gjson.Result) (int, bool) {
	i := ev.Get("index")
	if i.Type != gjson.Number || i.Num < 0 || i.Num > 1<<31 || i.Num != float64(int(i.Num)) {
		return 0, false
	}
	return int(i.Num), true
}

func (d *streamDecoder) lookup(ev gjson.Result) *decBlock {
	up, ok := blockIndex(ev)
	if !ok {
		return nil
	}
	b := d.blocks[up]
	if b == nil || b.skipped {
		return nil
	}
	return b
}

func (d *streamDecoder) blockDelta(ev gjson.Result, emit func(ir.Event) error) error {
	b := d.lookup(ev)
	if b == nil {
		return nil
	}
	delta := ev.Get("delta")
	out := ir.Event{Type: ir.EventDelta, Index: b.index, Block: b.kind}
	switch delta.Get("type").Str {
	case "text_delta":
		out.Text = delta.Get("text").String()
	case "thinking_delta":
		out.Text = delta.Get("thinking").String()
	case "signature_delta":
		out.Signature = delta.Get("signature").String()
	case "input_json_delta":
		out.ArgumentsDelta = delta.Get("partial_json").String()
	default:
		return nil // citations and later delta kinds have no IR form
	}
	if out.Text == "" && out.Signature == "" && out.ArgumentsDelta == "" {
		return nil
	}
	return emit(out)
}

func (d *streamDecoder) blockStop(ev gjson.Result, emit func(ir.Event) error) error {
	if b := d.lookup(ev); b == nil || b != d.open {
		return nil
	}
	return d.closeOpen(emit)
}

func (d *streamDecoder) closeOpen(emit func(ir.Event) error) error {
	b := d.open
	if b == nil {
		return nil
	}
	d.open = nil
	return emit(ir.Event{Type: ir.EventBlockStop, Index: b.index, Block: b.kind})
}

func (d *streamDecoder) messageDelta(ev gjson.Result, emit func(ir.Event) error) error {
	if sr := ev.Get("delta.stop_reason"); sr.Type == gjson.String && !d.stopped {
		if err := d.closeOpen(emit); err != nil {
			return err
		}
		d.stopped = true
		stop := ir.Event{Type: ir.EventStop, StopReason: stopFromWire(sr.Str), StopSequence: ev.Get("delta.stop_sequence").String()}
		if err := emit(stop); err != nil {
			return err
		}
	}
	return d.addUsage(ev.Get("usage"), emit)
}

// finish ends the IR stream once: open blocks close, a Stop is implied if
// the upstream never sent one, and Done follows.
func (d *streamDecoder) finish(emit func(ir.Event) error) error {
	if d.done {
		return nil
	}
	if err := d.closeOpen(emit); err != nil {
		return err
	}
	if !d.stopped {
		d.stopped = true
		if err := emit(ir.Event{Type: ir.EventStop, StopReason: ir.StopEnd}); err != nil {
			return err
		}
	}
	d.done = true
	return emit(ir.Event{Type: ir.EventDone})
}

// Finish completes a stream whose message_stop never came. A stream that
// already reported its stop reason is whole; one that did not was cut off.
func (d *streamDecoder) Finish(emit func(ir.Event) error) error {
	if d.done {
		return nil
	}
	if !d.stopped {
		return upstreamMalformed("upstream stream ended before the message was complete")
	}
	return d.finish(emit)
}
