package responses

import (
	"encoding/json"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// StreamEncoder turns IR stream events into the Responses event stream:
// response.created and response.in_progress first, then for every output
// item its added/delta/done events, and response.completed (or
// response.incomplete) with the whole Response last. Every event carries a
// sequence_number counting from 0. One encoder serves one stream.
type StreamEncoder struct {
	sink    protocol.EventSink
	meta    Meta
	model   string
	seq     int
	started bool
	ended   bool
	// blocks maps IR block indexes to their open output items.
	blocks map[int]*streamItem
	output []any
	stop   ir.StopReason
	usage  ir.Usage
}

// streamItem is an output item being built.
type streamItem struct {
	index int
	id    string
	kind  ir.BlockKind
	text  strings.Builder
	sig   string
	call  *wireFunctionCall
	// custom is set for a custom tool's call, whose input is only known
	// whole: the function's JSON arguments are unwrapped at the end.
	custom *wireCustomCall
}

// NewStreamEncoder returns an encoder writing to sink.
func NewStreamEncoder(sink protocol.EventSink, m Meta) *StreamEncoder {
	m.fill()
	return &StreamEncoder{sink: sink, meta: m, model: m.Model, blocks: map[int]*streamItem{}}
}

// ResponseID is the id of the response this encoder produces.
func (e *StreamEncoder) ResponseID() string { return e.meta.ResponseID() }

// Encode handles one IR event.
func (e *StreamEncoder) Encode(ev ir.Event) error {
	if e.ended {
		return nil
	}
	switch ev.Type {
	case ir.EventStart:
		if ev.Model != "" {
			e.model = ev.Model
		}
		return e.start()
	case ir.EventBlockStart:
		return e.blockStart(ev)
	case ir.EventDelta:
		return e.delta(ev)
	case ir.EventBlockStop:
		return e.blockStop(ev.Index)
	case ir.EventStop:
		e.stop = ev.StopReason
	case ir.EventUsage:
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
		}
	case ir.EventDone:
		return e.finish()
	}
	return nil
}

// emit writes one event; fields are name/value pairs after type and
// sequence_number, in order.
func (e *StreamEncoder) emit(typ string, fields ...any) error {
	buf := make([]byte, 0, 128)
	buf = append(buf, `{"type":`...)
	buf = appendJSON(buf, typ)
	buf = append(buf, `,"sequence_number":`...)
	buf = appendJSON(buf, e.seq)
	for i := 0; i+1 < len(fields); i += 2 {
		buf = append(buf, ',')
		buf = appendJSON(buf, fields[i])
		buf = append(buf, ':')
		buf = appendJSON(buf, fields[i+1])
	}
	buf = append(buf, '}')
	e.seq++
	return e.sink.Event(typ, buf)
}

func appendJSON(buf []byte, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return append(buf, "null"...)
	}
	return append(buf, b...)
}

func (e *StreamEncoder) start() error {
	if e.started {
		return nil
	}
	e.started = true
	r := envelope(e.meta, e.model, "in_progress", nil, nil)
	if err := e.emit("response.created", "response", r); err != nil {
		return err
	}
	return e.emit("response.in_progress", "response", r)
}

func (e *StreamEncoder) blockStart(ev ir.Event) error {
	if err := e.start(); err != nil {
		return err
	}
	if ev.Block == ir.BlockRedactedThinking {
		return nil // opaque provider data has no Responses item
	}
	if _, open := e.blocks[ev.Index]; open {
		return nil
	}
	it := &streamItem{index: len(e.output), kind: ev.Block}
	e.output = append(e.output, nil)
	e.blocks[ev.Index] = it
	switch ev.Block {
	case ir.BlockText:
		it.id = e.meta.itemID("msg", it.index)
		msg := wireMessage{ID: it.id, Type: "message", Status: "in_progress", Role: "assistant", Content: []wireText{}}
		if err := e.emit("response.output_item.added", "output_index", it.index, "item", msg); err != nil {
			return err
		}
		return e.emit("response.content_part.added", "item_id", it.id, "output_index", it.index, "content_index", 0, "part", outputText(""))
	case ir.BlockThinking:
		it.id = e.meta.itemID("rs", it.index)
		rs := wireReasoning{ID: it.id, Type: "reasoning", Summary: []wireSummary{}}
		if err := e.emit("response.output_item.added", "output_index", it.index, "item", rs); err != nil {
			return err
		}
		return e.emit("response.reasoning_summary_part.added", "item_id", it.id, "output_index", it.index,
			"summary_index", 0, "part", wireSummary{Type: "summary_text"})
	case ir.BlockToolCall:
		switch c := e.meta.callItem(it.index, &ir.ToolCall{ID: ev.ToolCallID, Name: ev.ToolName}, "in_progress").(type) {
		case wireCustomCall:
			it.id, it.custom = c.ID, &c
			return e.emit("response.output_item.added", "output_index", it.index, "item", c)
		case wireFunctionCall:
			it.id, it.call = c.ID, &c
			return e.emit("response.output_item.added", "output_index", it.index, "item", c)
		}
	}
	return nil
}

func (e *StreamEncoder) delta(ev ir.Event) error {
	it, ok := e.blocks[ev.Index]
	if !ok {
		return nil
	}
	switch it.kind {
	case ir.BlockText:
		if ev.Text == "" {
			return nil
		}
		it.text.WriteString(ev.Text)
		return e.emit("response.output_text.delta", "item_id", it.id, "output_index", it.index, "content_index", 0,
			"delta", ev.Text, "logprobs", []any{})
	case ir.BlockThinking:
		it.sig += ev.Signature
		if ev.Text == "" {
			return nil
		}
		it.text.WriteString(ev.Text)
		return e.emit("response.reasoning_summary_text.delta", "item_id", it.id, "output_index", it.index,
			"summary_index", 0, "delta", ev.Text)
	case ir.BlockToolCall:
		if ev.ArgumentsDelta == "" {
			return nil
		}
		it.text.WriteString(ev.ArgumentsDelta)
		if it.custom != nil {
			return nil
		}
		return e.emit("response.function_call_arguments.delta", "item_id", it.id, "output_index", it.index, "delta", ev.ArgumentsDelta)
	}
	return nil
}

func (e *StreamEncoder) blockStop(index int) error {
	it, ok := e.blocks[index]
	if !ok {
		return nil
	}
	delete(e.blocks, index)
	text := it.text.String()
	var done any
	var err error
	switch it.kind {
	case ir.BlockText:
		done, err = e.textDone(it, text)
	case ir.BlockThinking:
		done, err = e.reasoningDone(it, text)
	case ir.BlockToolCall:
		done, err = e.callDone(it, text)
	}
	if err != nil {
		return err
	}
	e.output[it.index] = done
	return e.emit("response.output_item.done", "output_index", it.index, "item", done)
}

func (e *StreamEncoder) textDone(it *streamItem, text string) (any, error) {
	if err := e.emit("response.output_text.done", "item_id", it.id, "output_index", it.index, "content_index", 0,
		"text", text, "logprobs", []any{}); err != nil {
		return nil, err
	}
	part := outputText(text)
	if err := e.emit("response.content_part.done", "item_id", it.id, "output_index", it.index, "content_index", 0, "part", part); err != nil {
		return nil, err
	}
	return wireMessage{ID: it.id, Type: "message", Status: "completed", Role: "assistant", Content: []wireText{part}}, nil
}

func (e *StreamEncoder) reasoningDone(it *streamItem, text string) (any, error) {
	if err := e.emit("response.reasoning_summary_text.done", "item_id", it.id, "output_index", it.index,
		"summary_index", 0, "text", text); err != nil {
		return nil, err
	}
	if err := e.emit("response.reasoning_summary_part.done", "item_id", it.id, "output_index", it.index,
		"summary_index", 0, "part", wireSummary{Type: "summary_text", Text: text}); err != nil {
		return nil, err
	}
	return wireReasoning{ID: it.id, Type: "reasoning", Summary: summaryOf(text), EncryptedContent: it.sig}, nil
}

func (e *StreamEncoder) callDone(it *streamItem, args string) (any, error) {
	if it.custom != nil {
		return e.customDone(it, args)
	}
	if args == "" {
		args = "{}"
	}
	c := *it.call
	c.Status, c.Arguments = "completed", args
	if err := e.emit("response.function_call_arguments.done", "item_id", it.id, "output_index", it.index,
		"name", c.Name, "arguments", args); err != nil {
		return nil, err
	}
	return c, nil
}

// finish closes any item left open and sends the final Response.
func (e *StreamEncoder) finish() error {
	if err := e.start(); err != nil {
		return err
	}
	if err := e.closeOpen(); err != nil {
		return err
	}
	e.ended = true
	status, incomplete := finalStatus(e.stop)
	r := envelope(e.meta, e.model, status, e.done(), toWireUsage(e.usage))
	r.IncompleteDetails = incomplete
	return e.emit("response."+status, "response", r)
}

// closeOpen ends open items in output order, so their events come out in
// a stable order.
func (e *StreamEncoder) closeOpen() error {
	for len(e.blocks) > 0 {
		first := -1
		for idx, it := range e.blocks {
			if first < 0 || it.index < e.blocks[first].index {
				first = idx
			}
		}
		if err := e.blockStop(first); err != nil {
			return err
		}
	}
	return nil
}

// done is the output without the slots of items that never finished.
func (e *StreamEncoder) done() []any {
	out := make([]any, 0, len(e.output))
	for _, it := range e.output {
		if it != nil {
			out = append(out, it)
		}
	}
	return out
}

// Fail ends a stream the upstream broke off: the items so far and a
// response.failed event with a client-safe message.
func (e *StreamEncoder) Fail(message string) error {
	if e.ended {
		return nil
	}
	if err := e.start(); err != nil {
		return err
	}
	if err := e.closeOpen(); err != nil {
		return err
	}
	e.ended = true
	r := envelope(e.meta, e.model, "failed", e.done(), toWireUsage(e.usage))
	r.Error = &wireError{Code: "server_error", Message: message}
	return e.emit("response.failed", "response", r)
}

// customDone sends a custom tool call's input, unwrapped from the
// arguments of the function it was sent upstream as.
func (e *StreamEncoder) customDone(it *streamItem, args string) (any, error) {
	c := *it.custom
	c.Status, c.Input = "completed", customInput(args)
	if c.Input != "" {
		if err := e.emit("response.custom_tool_call_input.delta", "item_id", it.id, "output_index", it.index, "delta", c.Input); err != nil {
			return nil, err
		}
	}
	if err := e.emit("response.custom_tool_call_input.done", "item_id", it.id, "output_index", it.index, "input", c.Input); err != nil {
		return nil, err
	}
	return c, nil
}
