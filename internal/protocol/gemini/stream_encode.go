package gemini

import (
	"bytes"
	"encoding/json"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// maxToolArgs caps the argument text buffered for one tool call: this format
// sends a call whole, so fragments must be held until the call ends.
const maxToolArgs = 1 << 20

// streamEncoder writes one GenerateContentResponse chunk per text or thinking
// delta, one per finished tool call, and a last chunk with an empty text
// part, finishReason and usageMetadata when the stream is done.
type streamEncoder struct {
	sink      protocol.EventSink
	id, model string

	inTool           bool
	toolID, toolName string
	args             bytes.Buffer
	// sig is a thinking block's signature not yet sent: it goes on the next
	// function call, or on the last chunk's part, where this provider puts
	// it (see clientParts).
	sig string

	finish   ir.StopReason
	usage    ir.Usage
	hasUsage bool
	done     bool

	buf bytes.Buffer
	enc *json.Encoder
}

// Encode handles one IR event.
func (e *streamEncoder) Encode(ev ir.Event) error {
	if e.done {
		return nil
	}
	switch ev.Type {
	case ir.EventStart:
		e.id, e.model = ev.ID, ev.Model
	case ir.EventBlockStart:
		// A decoder may start a block without stopping the previous one.
		if err := e.flushTool(); err != nil {
			return err
		}
		if ev.Block == ir.BlockToolCall {
			e.inTool, e.toolID, e.toolName = true, ev.ToolCallID, ev.ToolName
			e.args.Reset()
		}
	case ir.EventDelta:
		return e.delta(ev)
	case ir.EventBlockStop:
		return e.flushTool()
	case ir.EventStop:
		e.finish = ev.StopReason
	case ir.EventUsage:
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
			e.hasUsage = true
		}
	case ir.EventDone:
		return e.finishStream()
	}
	return nil
}

func (e *streamEncoder) delta(ev ir.Event) error {
	if ev.Block == ir.BlockRedactedThinking {
		// Opaque data meant for its own provider; nothing a client here
		// could show or send back.
		return nil
	}
	if ev.Block == ir.BlockToolCall || (ev.Block == 0 && ev.ArgumentsDelta != "") {
		if !e.inTool {
			return nil
		}
		if e.args.Len()+len(ev.ArgumentsDelta) > maxToolArgs {
			return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "tool_arguments_too_large",
				Message: "a tool call's arguments exceed 1 MiB", Retry: ir.RetryNever}
		}
		e.args.WriteString(ev.ArgumentsDelta)
		return nil
	}
	if err := e.flushTool(); err != nil {
		return err
	}
	var parts []partWire
	if ev.Text != "" {
		pw := textWire(ev.Text)
		pw.Thought = ev.Block == ir.BlockThinking
		parts = append(parts, pw)
	}
	if ev.Signature != "" {
		if e.sig != "" {
			// A second signed block before any call: the first one's
			// signature goes out on its own.
			empty := ""
			parts = append(parts, partWire{Text: &empty, Thought: true, ThoughtSignature: e.sig})
		}
		e.sig = clientSignature(ev.Signature)
	}
	if len(parts) == 0 {
		return nil
	}
	return e.send(parts, "", nil)
}

func (e *streamEncoder) flushTool() error {
	if !e.inTool {
		return nil
	}
	e.inTool = false
	fc := &functionCallWire{ID: e.toolID, Name: e.toolName, Args: argsObject(e.args.String())}
	e.args.Reset()
	sig := e.sig
	e.sig = ""
	return e.send([]partWire{{FunctionCall: fc, ThoughtSignature: sig}}, "", nil)
}

// finishStream sends the closing chunk with whatever usage was reported; a
// stream that never said why it stopped ended normally. The chunk carries
// content (one empty text part), finishReason and usageMetadata together,
// as the API's own last chunk does: clients that skip chunks without
// content (LangChain's Google client) would otherwise lose the usage.
func (e *streamEncoder) finishStream() error {
	if err := e.flushTool(); err != nil {
		return err
	}
	e.done = true
	var usage *usageWire
	if e.hasUsage {
		usage = usageToWire(e.usage)
	}
	last := textWire("")
	last.ThoughtSignature, e.sig = e.sig, ""
	return e.send([]partWire{last}, finishReason(e.finish), usage)
}

func (e *streamEncoder) send(parts []partWire, finish string, usage *usageWire) error {
	cand := candidateWire{FinishReason: finish}
	if len(parts) > 0 {
		cand.Content = &contentWire{Role: "model", Parts: parts}
	}
	w := responseWire{Candidates: []candidateWire{cand}, UsageMetadata: usage,
		ModelVersion: e.model, ResponseID: e.id}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	if err := e.enc.Encode(w); err != nil {
		return err
	}
	return e.sink.Event("", bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
}
