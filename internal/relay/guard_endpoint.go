package relay

import (
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// guardRequest is an endpoint's request stage (checkRequest) over the
// members its endpoint names in guard: a JSON body's strings under them,
// or a form's fields of those names. A redaction is written back to the
// body that goes upstream, and what validate derived from the body is
// derived again from the redacted one.
func (c *epCall) guardRequest() error {
	_, err := c.guardBody()
	return err
}

func (c *epCall) guardBody() (bool, error) {
	redacted, err := c.checkRequest(func() guardTexts {
		if c.in.form != nil {
			return c.formTexts(c.ep.guard)
		}
		return gatherJSON(&c.in.raw, c.ep.guard...).guardTexts(c.model)
	})
	if err != nil || !redacted {
		return redacted, err
	}
	c.texts = nil
	if c.ep.validate != nil {
		return true, c.ep.validate(c)
	}
	return true, nil
}

// formTexts are a form's text fields; a redaction goes out as an override
// of the field when the form is rebuilt for the upstream.
func (c *epCall) formTexts(names []string) guardTexts {
	vals := make([]string, 0, len(names))
	have := make([]string, 0, len(names))
	for _, n := range names {
		if v, ok := c.in.form.field(n); ok {
			vals, have = append(vals, v), append(have, n)
		}
	}
	orig := append([]string(nil), vals...)
	gt := guardTexts{texts: make([]*string, len(vals))}
	for i := range vals {
		gt.texts[i] = &vals[i]
	}
	gt.commit = func() error {
		for i, v := range vals {
			if v != orig[i] {
				if c.in.overrides == nil {
					c.in.overrides = map[string]string{}
				}
				c.in.overrides[have[i]] = v
			}
		}
		return nil
	}
	return gt
}

// guardAnswerBody is the response stage of an endpoint's whole JSON answer
// over the members its endpoint names in answer; a redaction rewrites
// *body. Nil when it may go to the client.
func (c *epCall) guardAnswerBody(body *[]byte) *ir.Error {
	if len(c.ep.answer) == 0 {
		return nil
	}
	blocked, _ := c.checkWhole(func() guardTexts { return gatherJSON(body, c.ep.answer...).guardTexts(c.model) })
	return blocked
}

// answerRefused answers with the 400 of an answer a guardrail blocked
// after the upstream made it: the call is billed ch all the same.
func (c *callCore) answerRefused(e *ir.Error, ch charge) {
	c.wrote = true
	c.settle(ch)
	c.refusedBilled()
	c.status = e.Status
	writeError(c.w, c.rl.Codecs[c.dialect], e)
}

// guard is a Responses call's request stage: a redaction also converts
// the redacted body again for chat channels.
func (rc *respCall) guard() error {
	redacted, err := rc.guardBody()
	rc.redacted = rc.redacted || redacted
	if redacted && err == nil && !rc.compact {
		rc.dec, rc.decErr = rc.rl.ResponsesAPI.DecodeRequest(rc.in.raw)
	}
	return err
}

// guardEncoding puts the guardrail window in front of enc when a
// guardrail checks this call's answers; bill then also records what the
// window found.
func (c *callCore) guardEncoding(enc protocol.StreamEncoder, fail func(*ir.Error), bill func(ir.Usage) charge) (protocol.StreamEncoder, func(ir.Usage) charge) {
	win := c.rl.guardSet().NewWindow(c.guardCall())
	if win == nil {
		return enc, bill
	}
	return &guardEncoder{ctx: c.r.Context(), enc: enc, win: win, fail: fail}, func(u ir.Usage) charge {
		c.guards = append(c.guards, win.Records()...)
		return bill(u)
	}
}

// refusedBilled marks a batch line whose answer a guardrail refused after
// the upstream made it: the batch bills it like an answered line.
func (c *callCore) refusedBilled() {
	if c.line != nil {
		c.line.billedRefusal = true
	}
}
