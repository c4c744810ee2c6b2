package guardrail

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// FromStore reads a stored row back into a spec.
func FromStore(g store.Guardrail) (Spec, error) {
	s := Spec{ID: g.ID, Name: g.Name, Type: g.Type, Config: json.RawMessage(g.Config), Mode: g.Mode,
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
	if err := json.Unmarshal([]byte(g.Stages), &s.Stages); err != nil {
		return s, fmt.Errorf("guardrail %s: stages: %w", g.Name, err)
	}
	if err := json.Unmarshal([]byte(g.AppliesTo), &s.AppliesTo); err != nil {
		return s, fmt.Errorf("guardrail %s: applies_to: %w", g.Name, err)
	}
	return s, nil
}

// ToStore is the row of a normalised spec.
func (s *Spec) ToStore() store.Guardrail {
	stages, _ := json.Marshal(s.Stages)
	scope, _ := json.Marshal(s.AppliesTo)
	return store.Guardrail{ID: s.ID, Name: s.Name, Type: s.Type, Config: string(s.Config), Stages: string(stages),
		Mode: s.Mode, AppliesTo: string(scope), CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

// StoreSource reads the guardrails from the database.
type StoreSource struct{ Repo store.GuardrailRepo }

// ListGuardrails implements Source.
func (s StoreSource) ListGuardrails(ctx context.Context) ([]Spec, error) {
	rows, err := s.Repo.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Spec, 0, len(rows))
	for _, r := range rows {
		sp, err := FromStore(r)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// DryRun checks text at stage with the set as if it were a call of c,
// returning the verdict and the text as it would go on.
func (s *Set) DryRun(ctx context.Context, c Call, stage, text string) (Verdict, string) {
	if stage == StageResponse {
		w := s.NewWindow(c)
		if w == nil {
			return Verdict{}, text
		}
		out, b := w.Write(ctx, text)
		if b == nil {
			var tail string
			tail, b = w.Flush(ctx)
			out += tail
		}
		return Verdict{Blocked: b, Records: w.Records(), Redacted: out != text && b == nil}, out
	}
	v := s.Check(ctx, Input{Call: c, Stage: stage, Texts: []*string{&text},
		Tokens: func() int { return tokenize.Count(c.Model, text) }})
	return v, text
}
