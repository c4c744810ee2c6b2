package bedrock

import (
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxStreamBlocks bounds how many content blocks one stream may open, so a
// broken upstream cannot grow the index map without limit.
const maxStreamBlocks = 4096

// streamDecoder turns ConverseStream events into IR events as they arrive.
// Converse starts only tool-use blocks explicitly; text and reasoning
// blocks begin with their first delta. The stop reason (messageStop) comes
// before the usage (metadata), so the stream is done only at its end.
type streamDecoder struct {
	started, stopped, done bool
	blocks                 map[int]*decBlock
	open                   *decBlock
	next                   int
	usage                  ir.Usage
}

type decBlock struct {
	index   int
	kind    ir.BlockKind
	skipped bool
}

// Decode handles one event: name is the frame's :event-type, data its JSON
// payload.
func (d *streamDecoder) Decode(name string, data []byte, emit func(ir.Event) error) error {
	if d.done {
		return nil
	}
	if len(data) == 0 {
		data = []byte("{}")
	}
	if !gjson.ValidBytes(data) {
		return malformed("upstream stream event is not valid JSON")
	}
	ev := gjson.ParseBytes(data)
	if strings.HasSuffix(name, "Exception") {
		return Exception(name, data)
	}
	switch name {
	case "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata":
	default:
		return nil // events added later carry nothing the IR needs
	}
	if err := d.ensureStart(emit); err != nil {
		return err
	}
	switch name {
	case "contentBlockStart":
		return d.blockStart(ev, emit)
	case "contentBlockDelta":
		return d.blockDelta(ev, emit)
	case "contentBlockStop":
		return d.blockStop(ev, emit)
	case "messageStop":
		return d.messageStop(ev, emit)
	case "metadata":
		return d.metadata(ev, emit)
	}
	return nil
}

func (d *streamDecoder) ensureStart(emit func(ir.Event) error) error {
	if d.started {
		return nil
	}
	d.started = true
	return emit(ir.Event{Type: ir.EventStart})
}

func blockIndex(ev gjson.Result) (int, bool) {
	i := ev.Get("contentBlockIndex")
	if i.Type != gjson.Number || i.Num < 0 || i.Num > 1<<31 || i.Num != float64(int(i.Num)) {
		return 0, false
	}
	return int(i.Num), true
}

func (d *streamDecoder) blockStart(ev gjson.Result, emit func(ir.Event) error) error {
	if d.stopped {
		return nil
	}
	up, ok := blockIndex(ev)
	if !ok {
		return malformed("upstream contentBlockStart without a valid contentBlockIndex")
	}
	if _, seen := d.blocks[up]; seen {
		return malformed("upstream started a content block twice")
	}
	tu := ev.Get("start.toolUse")
	if !tu.IsObject() {
		if len(d.blocks) >= maxStreamBlocks {
			return malformed("upstream stream has too many content blocks")
		}
		d.blocks[up] = &decBlock{skipped: true}
		return nil
	}
	return d.openBlock(up, ir.BlockToolCall, ir.Event{ToolCallID: tu.Get("toolUseId").String(), ToolName: tu.Get("name").String()}, emit)
}

func (d *streamDecoder) openBlock(up int, kind ir.BlockKind, start ir.Event, emit func(ir.Event) error) error {
	if len(d.blocks) >= maxStreamBlocks {
		return malformed("upstream stream has too many content blocks")
	}
	if err := d.closeOpen(emit); err != nil {
		return err
	}
	b := &decBlock{index: d.next, kind: kind}
	d.blocks[up] = b
	d.open = b
	d.next++
	start.Type, start.Index, start.Block = ir.EventBlockStart, b.index, kind
	return emit(start)
}

func (d *streamDecoder) blockDelta(ev gjson.Result, emit func(ir.Event) error) error {
	if d.stopped {
		return nil
	}
	up, ok := blockIndex(ev)
	if !ok {
		return malformed("upstream contentBlockDelta without a valid contentBlockIndex")
	}
	delta := ev.Get("delta")
	out := ir.Event{Type: ir.EventDelta}
	var kind ir.BlockKind
	var start ir.Event
	switch {
	case delta.Get("text").Type == gjson.String:
		kind, out.Text = ir.BlockText, delta.Get("text").Str
	case delta.Get("toolUse").IsObject():
		kind, out.ArgumentsDelta = ir.BlockToolCall, delta.Get("toolUse.input").String()
	case delta.Get("reasoningContent.redactedContent").Type == gjson.String:
		// Opaque reasoning comes whole; like the messages-native wire, it
		// rides in the block's start and the block closes at once.
		if _, seen := d.blocks[up]; seen {
			return nil
		}
		start.Text = delta.Get("reasoningContent.redactedContent").Str
		if err := d.openBlock(up, ir.BlockRedactedThinking, start, emit); err != nil {
			return err
		}
		return d.closeOpen(emit)
	case delta.Get("reasoningContent").IsObject():
		kind = ir.BlockThinking
		out.Text = delta.Get("reasoningContent.text").String()
		out.Signature = delta.Get("reasoningContent.signature").String()
	default:
		return nil // citations and later delta kinds have no IR form
	}
	b, seen := d.blocks[up]
	if !seen {
		if err := d.openBlock(up, kind, start, emit); err != nil {
			return err
		}
		b = d.open
	}
	if b.skipped || b.kind != kind {
		return nil
	}
	if out.Text == "" && out.Signature == "" && out.ArgumentsDelta == "" {
		return nil
	}
	out.Index, out.Block = b.index, b.kind
	return emit(out)
}

func (d *streamDecoder) blockStop(ev gjson.Result, emit func(ir.Event) error) error {
	up, ok := blockIndex(ev)
	if !ok || d.open == nil || d.blocks[up] != d.open {
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

func (d *streamDecoder) messageStop(ev gjson.Result, emit func(ir.Event) error) error {
	if d.stopped {
		return nil
	}
	if err := d.closeOpen(emit); err != nil {
		return err
	}
	d.stopped = true
	stop := ir.Event{Type: ir.EventStop, StopReason: stopFromWire(ev.Get("stopReason").String())}
	if stop.StopReason == ir.StopSequence {
		stop.StopSequence = ev.Get("additionalModelResponseFields.stop_sequence").String()
	}
	return emit(stop)
}

// metadata carries the call's usage, once, after messageStop.
func (d *streamDecoder) metadata(ev gjson.Result, emit func(ir.Event) error) error {
	u := ev.Get("usage")
	if !u.IsObject() {
		return nil
	}
	d.usage.Merge(usageFrom(u))
	total := d.usage
	return emit(ir.Event{Type: ir.EventUsage, Usage: &total})
}

// Finish ends the stream. A stream that reported its stop reason is whole
// (its usage may follow or not); one that did not was cut off.
func (d *streamDecoder) Finish(emit func(ir.Event) error) error {
	if d.done {
		return nil
	}
	if !d.started {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "empty_stream",
			Message: "the upstream stream ended before any data", Retry: ir.RetryNext}
	}
	if !d.stopped {
		return malformed("upstream stream ended before the message was complete")
	}
	d.done = true
	return emit(ir.Event{Type: ir.EventDone})
}
