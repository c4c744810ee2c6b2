package openai

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxToolCalls bounds the per-stream tool-call table, the only state that
// grows with input; no real answer comes near it.
const maxToolCalls = 1024

var doneSentinel = []byte("[DONE]")

// chatStreamDecoder turns chat.completion.chunk events into IR events. Only
// choice 0 is followed: the IR carries one answer.
type chatStreamDecoder struct {
	started, stopped, sawDone, finished bool
	// content is set once any block opened; sawTool once a tool call did.
	content, sawTool bool

	next     int // IR index of the next block
	open     int // IR index of the open block, -1 when none
	openKind ir.BlockKind
	tools    map[int]toolBlock
	nextKey  int // keys for tool calls that arrive without an index
}

// toolBlock ties an upstream tool_calls index to its IR block.
type toolBlock struct {
	index int
	id    string
}

func newChatStreamDecoder() *chatStreamDecoder {
	return &chatStreamDecoder{open: -1, tools: map[int]toolBlock{}, nextKey: -1}
}

// Decode handles one chunk. Chunks after [DONE] are ignored, as are blank
// keep-alive events.
func (d *chatStreamDecoder) Decode(_ string, data []byte, emit func(ir.Event) error) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || d.sawDone {
		return nil
	}
	if bytes.Equal(data, doneSentinel) {
		d.sawDone = true
		return nil
	}
	if !gjson.ValidBytes(data) {
		return upstreamError("the upstream stream sent a chunk that is not JSON")
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return upstreamError("the upstream stream sent a chunk that is not an object")
	}
	if e := root.Get("error"); present(e) {
		return streamError(e, data)
	}
	choice, hasChoice := firstChoice(root)
	usage := root.Get("usage")
	if !d.started && !hasChoice && !usage.IsObject() {
		// Azure opens with a prompt_filter_results chunk whose id and
		// model are empty; Start waits for a chunk that names them.
		return nil
	}
	if !d.started {
		d.started = true
		if err := emit(ir.Event{Type: ir.EventStart, ID: root.Get("id").String(), Model: root.Get("model").String()}); err != nil {
			return err
		}
	}
	if hasChoice && !d.stopped {
		if err := d.choice(choice, emit); err != nil {
			return err
		}
	}
	if usage.IsObject() {
		u := usageFrom(usage)
		return emit(ir.Event{Type: ir.EventUsage, Usage: &u})
	}
	return nil
}

// streamError maps an error object sent mid-stream. Its code is the HTTP
// status on some servers; otherwise it is an upstream failure.
func streamError(e gjson.Result, data []byte) error {
	status := 502
	if c := e.Get("code"); c.Type == gjson.Number && c.Int() >= 400 && c.Int() < 600 {
		status = int(c.Int())
	}
	return decodeError(status, data)
}

// firstChoice walks the choices in place: Array would allocate a slice for
// every chunk.
func firstChoice(root gjson.Result) (gjson.Result, bool) {
	var first gjson.Result
	found := false
	root.Get("choices").ForEach(func(_, c gjson.Result) bool {
		if c.IsObject() && c.Get("index").Int() == 0 {
			first, found = c, true
			return false
		}
		return true
	})
	return first, found
}

func (d *chatStreamDecoder) choice(c gjson.Result, emit func(ir.Event) error) error {
	if delta := c.Get("delta"); delta.IsObject() {
		if err := d.delta(delta, emit); err != nil {
			return err
		}
	}
	finish := c.Get("finish_reason")
	if finish.Type != gjson.String || finish.Str == "" {
		return nil
	}
	if err := d.closeOpen(emit); err != nil {
		return err
	}
	d.stopped = true
	reason := stopReason(finish.Str)
	if reason == ir.StopEnd && d.sawTool {
		reason = ir.StopToolUse
	}
	return emit(ir.Event{Type: ir.EventStop, StopReason: reason})
}

func (d *chatStreamDecoder) delta(delta gjson.Result, emit func(ir.Event) error) error {
	if text := reasoningText(delta); text != "" {
		if err := d.text(ir.BlockThinking, text, emit); err != nil {
			return err
		}
	}
	for _, key := range []string{"content", "refusal"} {
		if r := delta.Get(key); r.Type == gjson.String && r.Str != "" {
			if err := d.text(ir.BlockText, r.Str, emit); err != nil {
				return err
			}
		}
	}
	for _, tc := range delta.Get("tool_calls").Array() {
		if !tc.IsObject() {
			continue
		}
		if err := d.toolCall(tc, emit); err != nil {
			return err
		}
	}
	return nil
}

// text appends to the open block of kind, opening a new one (and closing
// whatever was open) when the kind changes.
func (d *chatStreamDecoder) text(kind ir.BlockKind, s string, emit func(ir.Event) error) error {
	if d.open < 0 || d.openKind != kind {
		if err := d.start(ir.Event{Type: ir.EventBlockStart, Block: kind}, emit); err != nil {
			return err
		}
	}
	return emit(ir.Event{Type: ir.EventDelta, Index: d.open, Block: kind, Text: s})
}

func (d *chatStreamDecoder) start(ev ir.Event, emit func(ir.Event) error) error {
	if err := d.closeOpen(emit); err != nil {
		return err
	}
	ev.Index = d.next
	d.open, d.openKind = d.next, ev.Block
	d.next++
	d.content = true
	return emit(ev)
}

func (d *chatStreamDecoder) closeOpen(emit func(ir.Event) error) error {
	if d.open < 0 {
		return nil
	}
	idx := d.open
	d.open = -1
	return emit(ir.Event{Type: ir.EventBlockStop, Index: idx, Block: d.openKind})
}

func (d *chatStreamDecoder) toolCall(tc gjson.Result, emit func(ir.Event) error) error {
	id := tc.Get("id").String()
	key := d.toolKey(tc, id)
	tb, known := d.tools[key]
	// A new id under a known index is a new call: some servers send every
	// call whole with index 0.
	if known && id != "" && id != tb.id {
		known = false
	}
	if !known {
		if len(d.tools) >= maxToolCalls {
			return upstreamError("the upstream stream sent more than %d tool calls", maxToolCalls)
		}
		if id == "" {
			id = newID("call_")
		}
		d.sawTool = true
		ev := ir.Event{Type: ir.EventBlockStart, Block: ir.BlockToolCall, ToolCallID: id, ToolName: tc.Get("function.name").String()}
		if err := d.start(ev, emit); err != nil {
			return err
		}
		tb = toolBlock{index: d.open, id: id}
		d.tools[key] = tb
	} else if tb.index != d.open {
		return upstreamError("the upstream stream interleaved the arguments of parallel tool calls")
	}
	args := tc.Get("function.arguments").String()
	if args == "" {
		return nil
	}
	return emit(ir.Event{Type: ir.EventDelta, Index: tb.index, Block: ir.BlockToolCall, ArgumentsDelta: args})
}

// toolKey names the call a tool_calls entry belongs to: its index when
// given; otherwise the call with the same id, the open call, or a fresh key.
func (d *chatStreamDecoder) toolKey(tc gjson.Result, id string) int {
	if idx := tc.Get("index"); idx.Type == gjson.Number {
		return clampInt(idx.Int())
	}
	for key, tb := range d.tools {
		if id == "" && tb.index == d.open || id != "" && tb.id == id {
			return key
		}
	}
	d.nextKey--
	return d.nextKey
}

// Finish closes the answer. A stream that ended with [DONE] but never said
// why it stopped is taken as complete when it produced content; one that
// ended with neither a stop reason nor [DONE] was cut off (CONTRACT §22).
func (d *chatStreamDecoder) Finish(emit func(ir.Event) error) error {
	if d.finished {
		return nil
	}
	d.finished = true
	if !d.started {
		return upstreamError("the upstream stream ended without sending anything")
	}
	if err := d.closeOpen(emit); err != nil {
		return err
	}
	if !d.stopped {
		if !d.content {
			return upstreamError("the upstream stream ended before any answer")
		}
		if !d.sawDone {
			return upstreamError("the upstream stream ended before the answer was complete")
		}
		d.stopped = true
		if err := emit(ir.Event{Type: ir.EventStop, StopReason: d.endReason()}); err != nil {
			return err
		}
	}
	return emit(ir.Event{Type: ir.EventDone})
}

func (d *chatStreamDecoder) endReason() ir.StopReason {
	if d.sawTool {
		return ir.StopToolUse
	}
	return ir.StopEnd
}
