package sqlstore

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// guardrailsMigration adds the guardrails table (CONTRACT §21).
var guardrailsMigration = Migration{Version: 134, Name: "guardrails", SQL: `
CREATE TABLE guardrails (
	id {{id}},
	name {{string}} NOT NULL,
	type {{string}} NOT NULL,
	config {{text}} NOT NULL,
	stages {{string}} NOT NULL,
	mode {{string}} NOT NULL,
	applies_to {{text}} NOT NULL,
	created_at {{time}} NOT NULL,
	updated_at {{time}} NOT NULL,
	CONSTRAINT guardrails_name_key UNIQUE (name)
) {{options}};
`}

type guardrailRepo struct{ s *Store }

// Guardrails returns the guardrail repository.
func (s *Store) Guardrails() store.GuardrailRepo { return guardrailRepo{s} }

const guardrailCols = "id, name, type, config, stages, mode, applies_to, created_at, updated_at"

func scanGuardrail(row interface{ Scan(...any) error }) (store.Guardrail, error) {
	var g store.Guardrail
	err := row.Scan(&g.ID, &g.Name, &g.Type, &g.Config, &g.Stages, &g.Mode, &g.AppliesTo, &g.CreatedAt, &g.UpdatedAt)
	g.CreatedAt, g.UpdatedAt = g.CreatedAt.UTC(), g.UpdatedAt.UTC()
	return g, err
}

func (r guardrailRepo) List(ctx context.Context) ([]store.Guardrail, error) {
	rows, err := r.s.pollQuery(ctx, "SELECT "+guardrailCols+" FROM guardrails ORDER BY id")
	if err != nil {
		return nil, wrap(err, "list guardrails")
	}
	out, err := collect(rows, scanGuardrail)
	return out, wrap(err, "list guardrails")
}

func (r guardrailRepo) Get(ctx context.Context, id int64) (*store.Guardrail, error) {
	g, err := scanGuardrail(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+guardrailCols+" FROM guardrails WHERE id = ?"), id))
	if err != nil {
		return nil, wrap(err, "guardrail")
	}
	return &g, nil
}

func (r guardrailRepo) Create(ctx context.Context, g *store.Guardrail) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	id, err := r.s.insert(ctx, r.s.db, r.s.Rebind("INSERT INTO guardrails (name, type, config, stages, mode, applies_to, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
		g.Name, g.Type, g.Config, g.Stages, g.Mode, g.AppliesTo, now, now)
	if err != nil {
		return wrap(err, "create guardrail")
	}
	g.ID, g.CreatedAt, g.UpdatedAt = id, now, now
	return nil
}

func (r guardrailRepo) Update(ctx context.Context, g *store.Guardrail) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	err := r.s.execOne(ctx, r.s.db, "guardrail", "UPDATE guardrails SET name = ?, type = ?, config = ?, stages = ?, mode = ?, applies_to = ?, updated_at = ? WHERE id = ?",
		g.Name, g.Type, g.Config, g.Stages, g.Mode, g.AppliesTo, now, g.ID)
	if err != nil {
		return err
	}
	g.UpdatedAt = now
	return nil
}

func (r guardrailRepo) Delete(ctx context.Context, id int64) error {
	return r.s.execOne(ctx, r.s.db, "guardrail", "DELETE FROM guardrails WHERE id = ?", id)
}
