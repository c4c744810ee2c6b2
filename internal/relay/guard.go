package relay

import (
	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Guardrails hand the relay the live guardrail set (CONTRACT §21). The
// relay runs them through the driver's hooks: the request stage before
// admission, the answer stage where the surface relays the answer.
type Guardrails interface {
	Set() *guardrail.Set
}

// guardSet is the current set; nil when no guardrails are wired.
func (rl *Relay) guardSet() *guardrail.Set {
	if rl.Guardrails == nil {
		return nil
	}
	return rl.Guardrails.Set()
}

// guardCall is who the call is for, as guardrail scopes see it.
func (c *callCore) guardCall() guardrail.Call {
	return guardrail.Call{Group: c.principal.Group, KeyID: c.principal.TokenID, TeamID: c.principal.TeamID, Model: c.model}
}

// blockedError is the 400 a guardrail's refusal answers in every dialect.
func blockedError(b *guardrail.Block) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "guardrail_blocked", Message: b.Message()}
}

// guardRequest is the chat surfaces' request stage (checkRequest). A
// redaction rewrites the decoded request, which then becomes the one body
// that goes out.
func (c *call) guardRequest() error {
	redacted, err := c.checkRequest(func() guardTexts {
		return guardTexts{texts: requestTexts(c.req), tokens: c.promptTokens, messages: func() any { return pluginMessages(c.req) }}
	})
	if redacted {
		c.redacted, c.counted = true, false
	}
	return err
}

// recordRefused writes the error row of a call refused before admission:
// it holds nothing, so the row moves no money.
func (c *callCore) recordRefused(e *ir.Error) {
	if c.line != nil {
		return
	}
	row := c.logRow(charge{detail: map[string]any{"error_code": e.Code}}, false)
	row.Type = store.LogError
	c.rl.Billing.Writer().Log(row)
}

// requestTexts points at every text a prompt holds: the system prompt,
// message text and the text of tool results.
func requestTexts(req *ir.Request) []*string {
	out := make([]*string, 0, len(req.Messages)+1)
	out = partTextRefs(out, req.System)
	for i := range req.Messages {
		out = partTextRefs(out, req.Messages[i].Parts)
	}
	return out
}

func partTextRefs(out []*string, parts []ir.Part) []*string {
	for i := range parts {
		p := &parts[i]
		switch p.Kind {
		case ir.PartText:
			out = append(out, &p.Text)
		case ir.PartToolResult:
			out = partTextRefs(out, p.ToolResult.Content)
		}
	}
	return out
}

// pluginMessages is the conversation as a guardrail plugin's ctx.messages:
// each turn's role and its text.
func pluginMessages(req *ir.Request) any {
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	out := make([]msg, 0, len(req.Messages)+1)
	if len(req.System) > 0 {
		out = append(out, msg{Role: "system", Content: joinParts(req.System)})
	}
	for _, m := range req.Messages {
		out = append(out, msg{Role: string(m.Role), Content: joinParts(m.Parts)})
	}
	return out
}

func joinParts(parts []ir.Part) string {
	var n int
	for _, p := range parts {
		if p.Kind == ir.PartText {
			n += len(p.Text)
		}
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		if p.Kind == ir.PartText {
			b = append(b, p.Text...)
		}
	}
	return string(b)
}

// guardPassthrough is the response stage of an answer relayed as the
// upstream sent it: decoded only when a guardrail checks answers, and
// re-encoded only when one redacted it.
func (c *call) guardPassthrough(body []byte) ([]byte, *ir.Error, error) {
	if !c.rl.guardSet().Applies(c.guardCall(), guardrail.StageResponse) {
		return body, nil, nil
	}
	res, err := c.sf.codec.DecodeResponse(body)
	if err != nil {
		// An answer that cannot be read cannot be checked: it does not
		// reach the client.
		return nil, nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: "the upstream answer could not be understood", Retry: ir.RetryNext, Cause: err}
	}
	blocked, redacted := c.guardAnswer(res)
	if blocked != nil || !redacted {
		return body, blocked, nil
	}
	out, err := c.sf.codec.EncodeResponse(res)
	return out, nil, err
}

// guardAnswer is the response stage of a regular answer, checked whole.
// It reports the refusal when an enforced guardrail blocks it and whether
// a redaction rewrote res.
func (c *callCore) guardAnswer(res *ir.Response) (blocked *ir.Error, redacted bool) {
	if res == nil {
		return nil, false
	}
	return c.checkWhole(func() guardTexts { return guardTexts{texts: answerTexts(res)} })
}

// answerTexts points at every text of an answer: its text, its reasoning
// and the arguments of its tool calls (a card number in a function's
// arguments leaves the gateway as surely as one in the text).
func answerTexts(res *ir.Response) []*string {
	texts := make([]*string, 0, len(res.Content))
	for i := range res.Content {
		switch p := &res.Content[i]; p.Kind {
		case ir.PartText:
			texts = append(texts, &p.Text)
		case ir.PartThinking:
			texts = append(texts, &p.Thinking.Text)
		case ir.PartToolCall:
			texts = append(texts, &p.ToolCall.Arguments)
		}
	}
	return texts
}
