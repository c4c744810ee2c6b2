package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// streamEncoder writes the documented event sequence: message_start, ping,
// then content_block_start / content_block_delta… / content_block_stop per
// block, then message_delta and message_stop. message_start carries the usage
// known when the stream starts; converted upstreams often report input
// tokens only at the end, so message_delta repeats the final input and cache
// counts next to output_tokens. message_start is written lazily, at the
// first event that needs it, so usage a decoder reports right after Start
// (as the messages-native upstream does) still lands in it.
type streamEncoder struct {
	sink protocol.EventSink
	buf  bytes.Buffer
	enc  *json.Encoder
	// scratch holds a delta's quoted text.
	scratch []byte

	id, model        string
	started, done    bool
	stop             ir.StopReason
	stopSeq          string
	usage            ir.Usage
	blocks           map[int]encBlock // IR index → emitted block
	open, nextOutIdx int              // open is -1 when no block is open
}

type encBlock struct {
	out  int
	kind ir.BlockKind
}

func newStreamEncoder(sink protocol.EventSink) *streamEncoder {
	e := &streamEncoder{sink: sink, blocks: map[int]encBlock{}, open: -1}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

func (e *streamEncoder) Encode(ev ir.Event) error {
	if e.done {
		return nil
	}
	switch ev.Type {
	case ir.EventStart:
		if !e.started {
			e.id, e.model = ev.ID, ev.Model
		}
		return nil
	case ir.EventUsage:
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
		}
		return nil
	}
	if !e.started {
		// message_start is followed by a ping of our own; an upstream ping
		// that triggered it need not be repeated.
		if err := e.ensureStarted(); err != nil || ev.Type == ir.EventPing {
			return err
		}
	}
	switch ev.Type {
	case ir.EventPing:
		return e.emit("ping", struct {
			Type string `json:"type"`
		}{"ping"})
	case ir.EventBlockStart:
		return e.blockStart(ev)
	case ir.EventDelta:
		return e.delta(ev)
	case ir.EventBlockStop:
		if b, ok := e.blocks[ev.Index]; ok && b.out == e.open {
			return e.closeOpen()
		}
		return nil
	case ir.EventStop:
		e.stop, e.stopSeq = ev.StopReason, ev.StopSequence
		return e.closeOpen()
	case ir.EventDone:
		return e.finish()
	}
	return nil
}

func (e *streamEncoder) ensureStarted() error {
	if e.started {
		return nil
	}
	e.started = true
	if e.id == "" {
		e.id = newID("msg_")
	}
	u := usageToWire(e.usage)
	msg := struct {
		Type    string `json:"type"`
		Message struct {
			ID           string    `json:"id"`
			Type         string    `json:"type"`
			Role         string    `json:"role"`
			Content      []any     `json:"content"`
			Model        string    `json:"model"`
			StopReason   *string   `json:"stop_reason"`
			StopSequence *string   `json:"stop_sequence"`
			Usage        wireUsage `json:"usage"`
		} `json:"message"`
	}{Type: "message_start"}
	m := &msg.Message
	m.ID, m.Type, m.Role, m.Content, m.Model, m.Usage = e.id, "message", "assistant", []any{}, e.model, u
	if err := e.emit("message_start", msg); err != nil {
		return err
	}
	return e.emit("ping", struct {
		Type string `json:"type"`
	}{"ping"})
}

func (e *streamEncoder) blockStart(ev ir.Event) error {
	if err := e.closeOpen(); err != nil {
		return err
	}
	return e.openBlock(ev.Index, ev.Block, ev)
}

func (e *streamEncoder) openBlock(index int, kind ir.BlockKind, ev ir.Event) error {
	out := e.nextOutIdx
	e.nextOutIdx++
	e.blocks[index] = encBlock{out: out, kind: kind}
	e.open = out
	var cb any
	switch kind {
	case ir.BlockThinking:
		cb = struct {
			Type     string `json:"type"`
			Thinking string `json:"thinking"`
		}{"thinking", ""}
	case ir.BlockRedactedThinking:
		cb = redactedBlock{Type: "redacted_thinking", Data: ev.Text}
	case ir.BlockToolCall:
		id := ev.ToolCallID
		if id == "" {
			id = newID("toolu_")
		}
		cb = toolUseBlock{Type: "tool_use", ID: id, Name: ev.ToolName, Input: json.RawMessage("{}")}
	default:
		cb = textBlock{Type: "text", Text: ""}
	}
	return e.emit("content_block_start", struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock any    `json:"content_block"`
	}{"content_block_start", out, cb})
}

// delta writes a delta to the block its IR index names. A delta for a block
// that never started opens one (decoders of formats without block framing
// may skip BlockStart); a delta for a block already closed still goes to
// its own index, since a tool's input cannot be split across two blocks.
func (e *streamEncoder) delta(ev ir.Event) error {
	b, ok := e.blocks[ev.Index]
	if !ok {
		kind := ev.Block
		if kind == 0 {
			kind = inferBlockKind(ev)
		}
		if err := e.closeOpen(); err != nil {
			return err
		}
		if err := e.openBlock(ev.Index, kind, ir.Event{}); err != nil {
			return err
		}
		b = e.blocks[ev.Index]
	}
	switch b.kind {
	case ir.BlockText:
		return e.emitDelta(b.out, "text_delta", "text", ev.Text)
	case ir.BlockThinking:
		if err := e.emitDelta(b.out, "thinking_delta", "thinking", ev.Text); err != nil {
			return err
		}
		return e.emitDelta(b.out, "signature_delta", "signature", ev.Signature)
	case ir.BlockToolCall:
		return e.emitDelta(b.out, "input_json_delta", "partial_json", ev.ArgumentsDelta)
	}
	return nil // redacted thinking arrives whole with its start
}

func inferBlockKind(ev ir.Event) ir.BlockKind {
	switch {
	case ev.ArgumentsDelta != "":
		return ir.BlockToolCall
	case ev.Signature != "":
		return ir.BlockThinking
	}
	return ir.BlockText
}

// emitDelta writes one content_block_delta; empty fragments are skipped.
func (e *streamEncoder) emitDelta(index int, typ, field, value string) error {
	if value == "" {
		return nil
	}
	e.buf.Reset()
	e.buf.WriteString(`{"type":"content_block_delta","index":`)
	e.buf.WriteString(strconv.Itoa(index))
	e.buf.WriteString(`,"delta":{"type":"`)
	e.buf.WriteString(typ)
	e.buf.WriteString(`","`)
	e.buf.WriteString(field)
	e.buf.WriteString(`":`)
	// Appended in place: encoding a string through json.Encoder boxes it,
	// one allocation per token.
	e.scratch = protocol.AppendJSONString(e.scratch[:0], value)
	e.buf.Write(e.scratch)
	e.buf.WriteString("}}")
	return e.sink.Event("content_block_delta", e.buf.Bytes())
}

func (e *streamEncoder) closeOpen() error {
	if e.open < 0 {
		return nil
	}
	out := e.open
	e.open = -1
	e.buf.Reset()
	e.buf.WriteString(`{"type":"content_block_stop","index":`)
	e.buf.WriteString(strconv.Itoa(out))
	e.buf.WriteByte('}')
	return e.sink.Event("content_block_stop", e.buf.Bytes())
}

// finish writes message_delta and message_stop. Usage and Stop may have
// arrived in either order; both are complete by Done.
func (e *streamEncoder) finish() error {
	if err := e.closeOpen(); err != nil {
		return err
	}
	e.done = true
	delta := struct {
		Type  string `json:"type"`
		Delta struct {
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		} `json:"delta"`
		Usage finalUsage `json:"usage"`
	}{Type: "message_delta"}
	delta.Delta.StopReason = stopToWire(e.stop)
	if e.stop == ir.StopSequence && e.stopSeq != "" {
		seq := e.stopSeq
		delta.Delta.StopSequence = &seq
	}
	delta.Usage = e.finalUsage()
	if err := e.emit("message_delta", delta); err != nil {
		return err
	}
	return e.emit("message_stop", struct {
		Type string `json:"type"`
	}{"message_stop"})
}

// finalUsage always has output_tokens; input and cache counts are added when
// known, so clients that overwrite their totals from message_delta keep the
// values message_start gave them.
type finalUsage struct {
	InputTokens              *int `json:"input_tokens,omitempty"`
	OutputTokens             int  `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens,omitempty"`
}

func (e *streamEncoder) finalUsage() finalUsage {
	w := usageToWire(e.usage)
	f := finalUsage{OutputTokens: w.OutputTokens}
	if e.usage.InputTokens > 0 {
		f.InputTokens = &w.InputTokens
		f.CacheCreationInputTokens = &w.CacheCreationInputTokens
		f.CacheReadInputTokens = &w.CacheReadInputTokens
	}
	return f
}

func (e *streamEncoder) emit(name string, v any) error {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	return e.sink.Event(name, bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'}))
}
