package responses

import (
	"encoding/json"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// EncodeResponse renders a complete IR answer as a Response object: a
// reasoning item per thinking part, one message item per run of text, and a
// function_call item per tool call (custom_tool_call for a custom tool), in the answer's order.
func EncodeResponse(res *ir.Response, m Meta) ([]byte, error) {
	m.fill()
	model := res.Model
	if model == "" {
		model = m.Model
	}
	status, incomplete := finalStatus(res.StopReason)
	w := envelope(m, model, status, outputItems(res.Content, m), toWireUsage(res.Usage))
	w.IncompleteDetails = incomplete
	return json.Marshal(w)
}

func outputItems(parts []ir.Part, m Meta) []any {
	out := []any{}
	var msg *wireMessage
	for _, p := range parts {
		n := len(out)
		switch p.Kind {
		case ir.PartText:
			if msg == nil {
				msg = &wireMessage{ID: m.itemID("msg", n), Type: "message", Status: "completed", Role: "assistant"}
				out = append(out, msg)
			}
			msg.Content = append(msg.Content, outputText(p.Text))
			continue
		case ir.PartThinking:
			out = append(out, wireReasoning{ID: m.itemID("rs", n), Type: "reasoning",
				Summary: summaryOf(p.Thinking.Text), EncryptedContent: p.Thinking.Signature})
		case ir.PartToolCall:
			out = append(out, m.callItem(n, p.ToolCall, "completed"))
		}
		msg = nil
	}
	return out
}
