package cohere

import (
	"bytes"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxStreamBlocks bounds how many blocks one stream may open.
const maxStreamBlocks = 4096

// streamDecoder turns v2 chat stream events into IR events as they arrive.
// An event's type is its data's "type", or the SSE event name when the data
// has none. The upstream builds one block at a time: text or thinking
// content (content-start … content-end), the tool plan (tool-plan-delta,
// decoded as text), and tool calls (tool-call-start … tool-call-end); the
// decoder keeps only the open block, never the answer.
type streamDecoder struct {
	started, stopped, done bool
	called                 bool
	id                     string
	next                   int // index of the next IR block
	open                   ir.BlockKind
	calls                  int
}

func (d *streamDecoder) Decode(name string, data []byte, emit func(ir.Event) error) error {
	data = bytes.TrimSpace(data)
	if d.done || len(data) == 0 || string(data) == "[DONE]" {
		return nil
	}
	if !gjson.ValidBytes(data) {
		return malformed("an upstream stream event is not valid JSON")
	}
	ev := gjson.ParseBytes(data)
	if !ev.IsObject() {
		return malformed("an upstream stream event is not a JSON object")
	}
	typ := ev.Get("type").String()
	if typ == "" {
		typ = name
	}
	if typ == "" || typ == "error" {
		// An error object in place of an event: the upstream gave up.
		if msg := ev.Get("message").String(); msg != "" || typ == "error" {
			return errorFor(http.StatusBadGateway, msg)
		}
		return nil
	}
	if d.stopped {
		return nil
	}
	if typ == "message-start" {
		return d.start(ev.Get("id").String(), emit)
	}
	if err := d.start("", emit); err != nil {
		return err
	}
	delta := ev.Get("delta.message")
	switch typ {
	case "content-start":
		c := delta.Get("content")
		kind := ir.BlockText
		if c.Get("type").String() == "thinking" {
			kind = ir.BlockThinking
		}
		if err := d.openBlock(ir.Event{Block: kind}, emit); err != nil {
			return err
		}
		return d.content(c, emit)
	case "content-delta":
		return d.content(delta.Get("content"), emit)
	case "content-end":
		if d.open == ir.BlockText || d.open == ir.BlockThinking {
			return d.closeBlock(emit)
		}
	case "tool-plan-delta":
		return d.delta(ir.BlockText, delta.Get("tool_plan").String(), emit)
	case "tool-call-start":
		return d.toolCallStart(delta.Get("tool_calls"), emit)
	case "tool-call-delta":
		if d.open != ir.BlockToolCall {
			return nil // no call to attribute the fragment to
		}
		args := firstCall(delta.Get("tool_calls")).Get("function.arguments").String()
		if args == "" {
			return nil
		}
		return emit(ir.Event{Type: ir.EventDelta, Index: d.next - 1, Block: ir.BlockToolCall, ArgumentsDelta: args})
	case "tool-call-end":
		if d.open == ir.BlockToolCall {
			return d.closeBlock(emit)
		}
	case "message-end":
		return d.messageEnd(ev.Get("delta"), emit)
	}
	// citation-start, citation-end, debug and event types added later carry
	// nothing the IR holds.
	return nil
}

func (d *streamDecoder) start(id string, emit func(ir.Event) error) error {
	if d.started {
		return nil
	}
	d.started, d.id = true, id
	return emit(ir.Event{Type: ir.EventStart, ID: id})
}

// content forwards a content item's text or thinking fragment.
func (d *streamDecoder) content(c gjson.Result, emit func(ir.Event) error) error {
	if t := c.Get("thinking").String(); t != "" {
		if err := d.delta(ir.BlockThinking, t, emit); err != nil {
			return err
		}
	}
	return d.delta(ir.BlockText, c.Get("text").String(), emit)
}

// delta appends text to the open block of its kind, opening one if needed.
func (d *streamDecoder) delta(kind ir.BlockKind, text string, emit func(ir.Event) error) error {
	if text == "" {
		return nil
	}
	if d.open != kind {
		if err := d.openBlock(ir.Event{Block: kind}, emit); err != nil {
			return err
		}
	}
	return emit(ir.Event{Type: ir.EventDelta, Index: d.next - 1, Block: kind, Text: text})
}

// firstCall reads delta.message.tool_calls, one call as an object (the
// documented shape) or the first of a list.
func firstCall(v gjson.Result) gjson.Result {
	if v.IsArray() {
		return v.Get("0")
	}
	return v
}

func (d *streamDecoder) toolCallStart(v gjson.Result, emit func(ir.Event) error) error {
	c := firstCall(v)
	name := c.Get("function.name").String()
	if name == "" {
		return malformed("an upstream tool call started without a function name")
	}
	id := c.Get("id").String()
	if id == "" {
		id = syntheticID(d.id, d.calls)
	}
	d.calls++
	d.called = true
	if err := d.openBlock(ir.Event{Block: ir.BlockToolCall, ToolCallID: id, ToolName: name}, emit); err != nil {
		return err
	}
	if args := c.Get("function.arguments").String(); args != "" {
		return emit(ir.Event{Type: ir.EventDelta, Index: d.next - 1, Block: ir.BlockToolCall, ArgumentsDelta: args})
	}
	return nil
}

func (d *streamDecoder) openBlock(start ir.Event, emit func(ir.Event) error) error {
	if err := d.closeBlock(emit); err != nil {
		return err
	}
	if d.next >= maxStreamBlocks {
		return malformed("the upstream stream has too many content blocks")
	}
	start.Type, start.Index = ir.EventBlockStart, d.next
	d.open = start.Block
	d.next++
	return emit(start)
}

func (d *streamDecoder) closeBlock(emit func(ir.Event) error) error {
	if d.open == 0 {
		return nil
	}
	kind := d.open
	d.open = 0
	return emit(ir.Event{Type: ir.EventBlockStop, Index: d.next - 1, Block: kind})
}

// messageEnd ends the answer: the stop reason, the usage, then Done. A
// stream that failed before producing anything is an upstream error, so
// another channel may serve the call.
func (d *streamDecoder) messageEnd(delta gjson.Result, emit func(ir.Event) error) error {
	reason := delta.Get("finish_reason").String()
	if (reason == "ERROR" || reason == "TIMEOUT") && d.next == 0 {
		msg := delta.Get("error").String()
		if msg == "" {
			msg = "the upstream failed to generate an answer (" + reason + ")"
		}
		return errorFor(http.StatusBadGateway, msg)
	}
	if err := d.closeBlock(emit); err != nil {
		return err
	}
	d.stopped = true
	if err := emit(ir.Event{Type: ir.EventStop, StopReason: stopFromWire(reason, d.called)}); err != nil {
		return err
	}
	if u := usageFrom(delta.Get("usage")); !u.IsZero() {
		if err := emit(ir.Event{Type: ir.EventUsage, Usage: &u}); err != nil {
			return err
		}
	}
	d.done = true
	return emit(ir.Event{Type: ir.EventDone})
}

// Finish checks the stream ended whole: message-end is the upstream's last
// event, and a stream without it was cut off.
func (d *streamDecoder) Finish(emit func(ir.Event) error) error {
	switch {
	case d.done:
		return nil
	case !d.started:
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "empty_stream",
			Message: "the upstream stream ended before any data", Retry: ir.RetryNext}
	}
	return malformed("the upstream stream ended before message-end")
}

func malformed(msg string) *ir.Error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: msg, Retry: ir.RetryNext}
}
