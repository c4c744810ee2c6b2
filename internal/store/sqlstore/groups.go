package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
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
	rows, err := r.s.db.QueryContext(ctx, "SELECT name, ratio, log_content FROM user_groups ORDER BY name")
	if err != nil {
		return nil, wrap(err, "list groups")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.Group, error) {
		var g store.Group
		var lc sql.NullString
		if err := row.Scan(&g.Name, &g.Ratio, &lc); err != nil {
			return g, err
		}
		var err error
		g.LogContent, err = contentLoggingOf(lc)
		return g, err
	})
	return out, wrap(err, "list groups")
}

// SetLogContent writes the group's log_content column alone, so the seed's
// ratio upserts never undo what the API set.
func (r groupRepo) SetLogContent(ctx context.Context, name string, lc *store.ContentLogging) error {
	v, err := contentLoggingText(lc)
	if err != nil {
		return err
	}
	return r.s.execOne(ctx, r.s.db, "set group log_content", "UPDATE user_groups SET log_content = ? WHERE name = ?", v, name)
}

func (r groupRepo) Delete(ctx context.Context, name string) error {
	return r.s.execOne(ctx, r.s.db, "delete group", "DELETE FROM user_groups WHERE name = ?", name)
}

func (r groupRepo) InUse(ctx context.Context, name string) (store.GroupUse, error) {
	use := store.GroupUse{Users: []string{}, Channels: []string{}}
	q := r.s.Rebind("SELECT COUNT(*) FROM users WHERE grp = ?")
	if err := r.s.db.QueryRowContext(ctx, q, name).Scan(&use.UserN); err != nil {
		return use, wrap(err, "group users")
	}
	q = r.s.Rebind("SELECT COUNT(*) FROM tokens t JOIN users u ON u.id = t.user_id WHERE u.grp = ?")
	if err := r.s.db.QueryRowContext(ctx, q, name).Scan(&use.KeyN); err != nil {
		return use, wrap(err, "group keys")
	}
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(fmt.Sprintf("SELECT username FROM users WHERE grp = ? ORDER BY username LIMIT %d", store.GroupUseNames)), name)
	if err != nil {
		return use, wrap(err, "group users")
	}
	if use.Users, err = collect(rows, func(row interface{ Scan(...any) error }) (string, error) {
		var n string
		return n, row.Scan(&n)
	}); err != nil {
		return use, wrap(err, "group users")
	}
	// group_list is an encoded list; channels are few, so filter here.
	rows, err = r.s.db.QueryContext(ctx, "SELECT name, group_list FROM channels ORDER BY name")
	if err != nil {
		return use, wrap(err, "group channels")
	}
	defer rows.Close()
	for rows.Next() {
		var ch, list string
		if err := rows.Scan(&ch, &list); err != nil {
			return use, wrap(err, "group channels")
		}
		groups, err := decodeList(list)
		if err != nil {
			return use, wrap(err, "group channels")
		}
		for _, g := range groups {
			if g == name {
				use.Channels = append(use.Channels, ch)
				break
			}
		}
	}
	return use, wrap(rows.Err(), "group channels")
}
