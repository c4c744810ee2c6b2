package relay

import (
	"context"
	"encoding/json"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// deltaSpec says where an event of a stream relayed as the upstream sent
// it carries windowed text: the path of the text ("" for an event that
// carries none), which block it belongs to (text of another block is
// checked apart), and whether the event is nothing but that text (pure: it
// may be held back whole).
type deltaSpec func(name string, data []byte) (path string, key string, pure bool)

// guardPass is guardEncoder for a stream whose events pass as the upstream
// sent them (completions, the Responses API on a native channel): the text
// of each delta event goes through the guardrail window, and the event
// leaves carrying only what the window released (or not at all when it
// released nothing). Any other event first releases what is held, in a
// copy of the last delta event. Once a guardrail redacted, the events
// that repeat the whole text (a Responses stream's done and completed
// events) are redacted too, so the text does not leave by that door.
type guardPass struct {
	ctx   context.Context
	inner eventStep
	win   *guardrail.Window
	set   *guardrail.Set
	call  guardrail.Call
	delta deltaSpec
	fail  func(*ir.Error)
	// whole names the members of a non-delta event whose strings repeat
	// the answer.
	whole []string
	// The held text's delta event, copied: the template of the event
	// that releases it.
	name, path, key string
	data            []byte
	holding         bool
	blocked         bool
}

func (g *guardPass) event(name string, data []byte) error {
	if g.blocked {
		return errGuardStop
	}
	path, key, pure := g.delta(name, data)
	if path == "" {
		if err := g.flush(); err != nil {
			return err
		}
		return g.inner.event(name, g.redactWhole(data))
	}
	if g.holding && key != g.key {
		if err := g.flush(); err != nil {
			return err
		}
	}
	out, b := g.win.Write(g.ctx, gjson.GetBytes(data, path).String())
	if b != nil {
		return g.block(b)
	}
	if !pure {
		// The event says more than its text (a finish reason): the block
		// ends here, so all that is held leaves with it.
		rest, b := g.win.Flush(g.ctx)
		if b != nil {
			return g.block(b)
		}
		g.holding = false
		return g.emit(name, data, path, out+rest)
	}
	g.name, g.path, g.key, g.holding = name, path, key, true
	g.data = append(g.data[:0], data...)
	if out == "" {
		return nil
	}
	return g.emit(name, data, path, out)
}

func (g *guardPass) end() error {
	if err := g.flush(); err != nil {
		return err
	}
	return g.inner.end()
}

// flush releases the held text in a copy of the last delta event.
func (g *guardPass) flush() error {
	if !g.holding {
		return nil
	}
	g.holding = false
	out, b := g.win.Flush(g.ctx)
	if b != nil {
		return g.block(b)
	}
	if out == "" {
		return nil
	}
	return g.emit(g.name, g.data, g.path, out)
}

func (g *guardPass) emit(name string, data []byte, path, text string) error {
	out, err := sjson.SetBytes(data, path, text)
	if err != nil {
		return err
	}
	return g.inner.event(name, out)
}

// redactWhole applies the guardrails to the answer an event repeats whole,
// once the window found something to redact; a blocking guardrail would
// have ended the stream before this event.
func (g *guardPass) redactWhole(data []byte) []byte {
	if len(g.whole) == 0 || !g.win.Fired() {
		return data
	}
	j := gatherJSON(&data, g.whole...)
	if len(j.vals) == 0 {
		return data
	}
	gt := j.guardTexts("")
	v := g.set.Check(g.ctx, guardrail.Input{Call: g.call, Stage: guardrail.StageResponse, Texts: gt.texts})
	if v.Redacted {
		_ = j.commit()
	}
	return data
}

func (g *guardPass) block(b *guardrail.Block) error {
	g.blocked = true
	g.fail(blockedError(b))
	return errGuardStop
}

// windowed wraps a pass-through step in the guardrail window when a
// guardrail checks this call's answers; bill then also records what the
// window found. Without one both come back as they are.
func (c *callCore) windowed(step eventStep, delta deltaSpec, whole []string, fail func(*ir.Error), bill func(ir.Usage) charge) (eventStep, func(ir.Usage) charge) {
	set := c.rl.guardSet()
	call := c.guardCall()
	win := set.NewWindow(call)
	if win == nil {
		return step, bill
	}
	g := &guardPass{ctx: c.r.Context(), inner: step, win: win, set: set, call: call, delta: delta, whole: whole, fail: fail}
	return g, func(u ir.Usage) charge {
		c.guards = append(c.guards, win.Records()...)
		return bill(u)
	}
}

// completionDelta: a completion chunk's text is its first choice's.
func completionDelta(_ string, data []byte) (string, string, bool) {
	r := gjson.GetManyBytes(data, "choices.0.text", "choices.0.index", "choices.0.finish_reason", "choices.#", "usage")
	if r[0].Str == "" {
		return "", "", false
	}
	pure := (!r[2].Exists() || r[2].Type == gjson.Null) && r[3].Int() == 1 && (!r[4].Exists() || r[4].Type == gjson.Null)
	return "choices.0.text", r[1].Raw, pure
}

// responsesDeltas are the Responses stream's events of text a model
// writes: output text, refusals, reasoning and tool-call arguments.
var responsesDeltas = map[string]bool{
	"response.output_text.delta": true, "response.refusal.delta": true,
	"response.reasoning_text.delta": true, "response.reasoning_summary_text.delta": true,
	"response.function_call_arguments.delta": true, "response.custom_tool_call_input.delta": true,
}

func responsesDelta(name string, data []byte) (string, string, bool) {
	if name == "" {
		name = gjson.GetBytes(data, "type").Str
	}
	if !responsesDeltas[name] {
		return "", "", false
	}
	r := gjson.GetManyBytes(data, "output_index", "content_index", "summary_index")
	return "delta", name + "/" + r[0].Raw + "/" + r[1].Raw + "/" + r[2].Raw, true
}

// responsesWhole are the members of the Responses stream's events that
// repeat text whole (done, content part, output item, completed).
var responsesWhole = []string{"text", "arguments", "input", "refusal", "part", "item", "response"}

// responsesFail ends a Responses stream with its error event.
func responsesFail(s *sink) func(*ir.Error) {
	return func(e *ir.Error) {
		data, _ := json.Marshal(map[string]any{"type": "error", "code": e.Code, "message": e.Message, "param": nil})
		_ = s.Event("error", data)
		s.flush()
	}
}
