package store

import (
	"context"
	"time"
)

// Guardrail is one stored guardrail (CONTRACT §21). Config, Stages and
// AppliesTo are JSON, validated by internal/guardrail before they are
// stored.
type Guardrail struct {
	ID        int64
	Name      string
	Type      string
	Config    string
	Stages    string
	Mode      string
	AppliesTo string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// GuardrailRepo stores guardrails. Names are unique (ErrConflict).
type GuardrailRepo interface {
	// List returns every guardrail, oldest first: the order they run in.
	List(ctx context.Context) ([]Guardrail, error)
	Get(ctx context.Context, id int64) (*Guardrail, error)
	// Create stores g and sets its id and times.
	Create(ctx context.Context, g *Guardrail) error
	// Update rewrites every field but the id and creation time.
	Update(ctx context.Context, g *Guardrail) error
	Delete(ctx context.Context, id int64) error
}
