package sqlstore

import (
	"context"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type groupRepo struct{ s *Store }

// upsertSQL builds an insert that overwrites cols when the key column
// already holds the value.
func (s *Store) upsertSQL(table, key string, cols []string) string {
	all := append([]string{key}, cols...)
	q := "INSERT INTO " + table + " (" + strings.Join(all, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(cols)) + ")"
	sets := make([]string, len(cols))
	for i, c := range cols {
		if s.dialect == MySQL {
			sets[i] = c + " = VALUES(" + c + ")"
		} else {
			sets[i] = c + " = excluded." + c
		}
	}
	if s.dialect == MySQL {
		return q + " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
	}
	return s.Rebind(q + " ON CONFLICT (" + key + ") DO UPDATE SET " + strings.Join(sets, ", "))
}

func (r groupRepo) Upsert(ctx context.Context, g store.Group) error {
	_, err := r.s.db.ExecContext(ctx, r.s.upsertSQL("user_groups", "name", []string{"ratio"}), g.Name, g.Ratio)
	return wrap(err, "upsert group")
}

func (r groupRepo) List(ctx context.Context) ([]store.Group, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT name, ratio FROM user_groups ORDER BY name")
	if err != nil {
		return nil, wrap(err, "list groups")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.Group, error) {
		var g store.Group
		return g, row.Scan(&g.Name, &g.Ratio)
	})
	return out, wrap(err, "list groups")
}

func (r groupRepo) Delete(ctx context.Context, name string) error {
	return r.s.execOne(ctx, r.s.db, "delete group", "DELETE FROM user_groups WHERE name = ?", name)
}
