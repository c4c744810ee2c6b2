package openai

import (
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// ChatStreamOptions tunes a chunk stream for the client that asked for it.
type ChatStreamOptions struct {
	// IncludeUsage adds the final usage chunk (choices: []) and a
	// "usage": null on every other chunk, which is what a client that sent
	// stream_options.include_usage expects.
	IncludeUsage bool
}

// NewChatStreamEncoderWith returns an encoder writing chat.completion.chunk
// events, then the [DONE] sentinel, to sink.
func NewChatStreamEncoderWith(sink protocol.EventSink, opts ChatStreamOptions) protocol.StreamEncoder {
	return &chatStreamEncoder{sink: sink, opts: opts, now: time.Now, blocks: map[int]encBlock{}}
}

// chatStreamEncoder writes one chunk per IR delta. Every chunk shares the
// id, created and model of the Start event, so the JSON prefix is built once.
type chatStreamEncoder struct {
	sink protocol.EventSink
	opts ChatStreamOptions
	now  func() time.Time

	prefix  []byte // {"id":…,"object":…,"created":…,"model":…,"choices":
	buf     []byte // the chunk being written
	dbuf    []byte // the delta object being built
	started bool
	stopped bool
	done    bool
	usage   ir.Usage
	sawUse  bool

	blocks   map[int]encBlock // IR block index → what it is
	nextTool int              // tool_calls index of the next tool call
}

// encBlock remembers a block's kind and, for tool calls, its tool index.
type encBlock struct {
	kind ir.BlockKind
	tool int
}

// Encode handles one IR event. Usage is held back until Done because the
// format puts it in the last chunk, after the finish_reason chunk.
func (e *chatStreamEncoder) Encode(ev ir.Event) error {
	if e.done {
		return nil
	}
	switch ev.Type {
	case ir.EventStart:
		return e.start(ev.ID, ev.Model)
	case ir.EventBlockStart:
		return e.blockStart(ev)
	case ir.EventDelta:
		return e.delta(ev)
	case ir.EventStop:
		return e.stop(ev.StopReason)
	case ir.EventUsage:
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
			e.sawUse = true
		}
	case ir.EventDone:
		return e.finish()
	}
	return nil
}

// start opens the stream with the role chunk, which the official clients
// use to learn the message role before any content.
func (e *chatStreamEncoder) start(id, model string) error {
	if e.started {
		return nil
	}
	e.started = true
	if id == "" {
		id = newID("chatcmpl-")
	}
	p := append(e.prefix[:0], `{"id":`...)
	p = appendString(p, id)
	p = append(p, `,"object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, e.now().Unix(), 10)
	p = append(p, `,"model":`...)
	p = appendString(p, model)
	e.prefix = append(p, `,"choices":`...)
	return e.chunk([]byte(`{"role":"assistant","content":""}`), "")
}

// ensureStarted covers decoders that skip Start; the client still gets a
// well-formed stream.
func (e *chatStreamEncoder) ensureStarted() error {
	if e.started {
		return nil
	}
	return e.start("", "")
}

// blockStart announces tool calls; text and reasoning blocks need no chunk
// of their own. Content after the finish chunk is dropped, since no client
// expects deltas after finish_reason.
func (e *chatStreamEncoder) blockStart(ev ir.Event) error {
	if e.stopped {
		return nil
	}
	if err := e.ensureStarted(); err != nil {
		return err
	}
	b := encBlock{kind: ev.Block}
	if ev.Block != ir.BlockToolCall {
		e.blocks[ev.Index] = b
		return nil
	}
	b.tool = e.nextTool
	e.nextTool++
	e.blocks[ev.Index] = b
	id := ev.ToolCallID
	if id == "" {
		id = newID("call_")
	}
	d := append(e.dbuf[:0], `{"tool_calls":[{"index":`...)
	d = strconv.AppendInt(d, int64(b.tool), 10)
	d = append(d, `,"id":`...)
	d = appendString(d, id)
	d = append(d, `,"type":"function","function":{"name":`...)
	d = appendString(d, ev.ToolName)
	d = append(d, `,"arguments":""}}]}`...)
	e.dbuf = d
	return e.chunk(d, "")
}

func (e *chatStreamEncoder) delta(ev ir.Event) error {
	if e.stopped {
		return nil
	}
	if err := e.ensureStarted(); err != nil {
		return err
	}
	b, ok := e.blocks[ev.Index]
	if !ok {
		b = encBlock{kind: ev.Block}
	}
	d := e.dbuf[:0]
	switch {
	case b.kind == ir.BlockText && ev.Text != "":
		d = appendString(append(d, `{"content":`...), ev.Text)
	case b.kind == ir.BlockThinking && ev.Text != "":
		d = appendString(append(d, `{"reasoning_content":`...), ev.Text)
	case b.kind == ir.BlockToolCall && ok && ev.ArgumentsDelta != "":
		d = append(d, `{"tool_calls":[{"index":`...)
		d = strconv.AppendInt(d, int64(b.tool), 10)
		d = append(d, `,"function":{"arguments":`...)
		d = appendString(d, ev.ArgumentsDelta)
		d = append(d, `}}]`...)
	default:
		// Signatures, redacted reasoning and empty deltas have no
		// counterpart in this format.
		return nil
	}
	d = append(d, '}')
	e.dbuf = d
	return e.chunk(d, "")
}

func (e *chatStreamEncoder) stop(reason ir.StopReason) error {
	if e.stopped {
		return nil
	}
	if err := e.ensureStarted(); err != nil {
		return err
	}
	e.stopped = true
	return e.chunk([]byte(`{}`), finishReason(reason))
}

// finish writes the finish chunk if Stop never came, the usage chunk when
// the client asked for it, and the [DONE] sentinel.
func (e *chatStreamEncoder) finish() error {
	if err := e.stop(ir.StopEnd); err != nil {
		return err
	}
	e.done = true
	if e.opts.IncludeUsage && e.sawUse {
		if err := e.usageChunk(); err != nil {
			return err
		}
	}
	return e.sink.Event("", doneSentinel)
}

// chunk writes one chunk carrying delta for choice 0.
func (e *chatStreamEncoder) chunk(delta []byte, finish string) error {
	b := append(e.buf[:0], e.prefix...)
	b = append(b, `[{"index":0,"delta":`...)
	b = append(b, delta...)
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	b = appendStringOrNull(b, finish)
	b = append(b, "}]"...)
	if e.opts.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	e.buf = append(b, '}')
	return e.sink.Event("", e.buf)
}

// usageChunk writes the usage-only chunk that ends an include_usage stream.
func (e *chatStreamEncoder) usageChunk() error {
	u, err := marshal(toWireUsage(e.usage))
	if err != nil {
		return err
	}
	b := append(e.buf[:0], e.prefix...)
	b = append(b, `[],"usage":`...)
	b = append(b, u...)
	e.buf = append(b, '}')
	return e.sink.Event("", e.buf)
}
