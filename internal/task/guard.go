package task

import (
	"context"
	"slices"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Guardrails hand the task pipeline the live guardrail set (CONTRACT §21):
// a submission's prompt is checked like a chat request's, before it is
// priced, reserved or sent, so a blocked one costs nothing.
type Guardrails interface {
	Set() *guardrail.Set
}

// promptKeys are the members of a task body whose strings a model reads.
// Only these are checked: a task body also carries image data and
// addresses, which no guardrail should read as a key or a number.
var promptKeys = []string{"prompt", "negative_prompt", "text", "lyrics", "input", "instructions",
	"content", "description", "title", "style", "tags", "query", "caption", "script"}

// guard is a submission's request stage. A redaction rewrites the body in
// place, before any plugin hook sees it; a block answers 400
// guardrail_blocked and leaves an error row that names what fired.
func (s *Service) guard(ctx context.Context, sub *submission, t *Task) error {
	if s.d.Guardrails == nil {
		return nil
	}
	set := s.d.Guardrails.Set()
	call := guardrail.Call{Group: sub.Principal.Group, KeyID: sub.Principal.TokenID, TeamID: sub.Principal.TeamID, Model: sub.Model}
	if !set.Applies(call, guardrail.StageRequest) {
		return nil
	}
	var texts bodyTexts
	texts.walk(sub.Body, false)
	v := set.Check(ctx, guardrail.Input{Call: call, Stage: guardrail.StageRequest, Texts: texts.ptrs()})
	t.guards = v.Records
	if v.Redacted {
		texts.commit()
	}
	if v.Blocked == nil {
		return nil
	}
	e := &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "guardrail_blocked", Message: v.Blocked.Message()}
	row := s.usageLog(t, store.LogError, 0, map[string]any{"error_code": e.Code}, nil)
	s.d.Billing.Writer().Log(row)
	return e
}

// bodyTexts are the prompt strings of a decoded JSON body, each with the
// setter that writes a redaction back into its map or array.
type bodyTexts struct {
	vals []string
	set  []func(string)
}

func (b *bodyTexts) walk(v any, text bool) {
	switch x := v.(type) {
	case string:
		if text {
			b.vals, b.set = append(b.vals, x), append(b.set, nil)
		}
	case map[string]any:
		for k, e := range x {
			n := len(b.vals)
			b.walk(e, slices.Contains(promptKeys, k))
			if _, ok := e.(string); ok && len(b.vals) > n {
				b.set[n] = func(r string) { x[k] = r }
			}
		}
	case []any:
		for i, e := range x {
			n := len(b.vals)
			b.walk(e, text)
			if _, ok := e.(string); ok && len(b.vals) > n {
				b.set[n] = func(r string) { x[i] = r }
			}
		}
	}
}

func (b *bodyTexts) ptrs() []*string {
	out := make([]*string, len(b.vals))
	for i := range b.vals {
		out[i] = &b.vals[i]
	}
	return out
}

func (b *bodyTexts) commit() {
	for i, v := range b.vals {
		if b.set[i] != nil {
			b.set[i](v)
		}
	}
}
