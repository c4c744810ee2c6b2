package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type channelRepo struct{ s *Store }

const channelSelect = "SELECT id, name, type, base_url, channel_key, models, group_list, priority, weight, model_mapping, settings, cost, status, created_at, updated_at FROM channels"

// channelRow holds a channel's JSON columns in their stored form.
type channelRow struct {
	models, groups, mapping, settings string
	cost                              sql.NullString
}

func encodeChannel(c *store.Channel) (channelRow, error) {
	var r channelRow
	var err error
	if r.models, err = stringList(c.Models); err != nil {
		return r, err
	}
	if r.groups, err = stringList(c.Groups); err != nil {
		return r, err
	}
	mapping := c.ModelMapping
	if mapping == nil {
		mapping = map[string]string{}
	}
	if r.mapping, err = jsonText(mapping); err != nil {
		return r, err
	}
	settings := c.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	if r.settings, err = jsonText(settings); err != nil {
		return r, err
	}
	if c.Cost != nil {
		text, err := jsonText(c.Cost)
		if err != nil {
			return r, err
		}
		r.cost = sql.NullString{String: text, Valid: true}
	}
	return r, nil
}

func scanChannel(row interface{ Scan(...any) error }) (store.Channel, error) {
	var c store.Channel
	var r channelRow
	if err := row.Scan(&c.ID, &c.Name, &c.Type, &c.BaseURL, &c.Key, &r.models, &r.groups, &c.Priority, &c.Weight,
		&r.mapping, &r.settings, &r.cost, &c.Status, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	var err error
	if c.Models, err = decodeList(r.models); err != nil {
		return c, err
	}
	if c.Groups, err = decodeList(r.groups); err != nil {
		return c, err
	}
	c.ModelMapping = map[string]string{}
	c.Settings = map[string]any{}
	if err := json.Unmarshal([]byte(r.mapping), &c.ModelMapping); err != nil {
		return c, fmt.Errorf("decode model_mapping: %w", err)
	}
	if err := json.Unmarshal([]byte(r.settings), &c.Settings); err != nil {
		return c, fmt.Errorf("decode settings: %w", err)
	}
	if r.cost.Valid && r.cost.String != "" {
		c.Cost = &store.ChannelCost{}
		if err := json.Unmarshal([]byte(r.cost.String), c.Cost); err != nil {
			return c, fmt.Errorf("decode cost: %w", err)
		}
	}
	return c, nil
}

// Create inserts c and its abilities in one transaction and fills in ID,
// CreatedAt (when zero), UpdatedAt and an empty Status as enabled.
func (r channelRepo) Create(ctx context.Context, c *store.Channel) error {
	enc, err := encodeChannel(c)
	if err != nil {
		return err
	}
	created, status := orNow(c.CreatedAt), defaultStatus(c.Status)
	updated := created
	var id int64
	err = r.s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = r.s.insert(ctx, tx,
			"INSERT INTO channels (name, type, base_url, channel_key, models, group_list, priority, weight, model_mapping, settings, cost, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			c.Name, c.Type, c.BaseURL, c.Key, enc.models, enc.groups, c.Priority, c.Weight, enc.mapping, enc.settings, enc.cost, status, created, updated)
		if err != nil {
			return err
		}
		return r.s.writeAbilities(ctx, tx, id, c, status)
	})
	if err != nil {
		return wrap(err, "create channel")
	}
	c.ID, c.CreatedAt, c.UpdatedAt, c.Status = id, created, updated, status
	return nil
}

// Update writes every field but ID and CreatedAt, stamps UpdatedAt and
// rewrites the channel's abilities in the same transaction.
func (r channelRepo) Update(ctx context.Context, c *store.Channel) error {
	enc, err := encodeChannel(c)
	if err != nil {
		return err
	}
	updated, status := now(), defaultStatus(c.Status)
	err = r.s.withTx(ctx, func(tx *sql.Tx) error {
		err := r.s.execOne(ctx, tx, "update channel",
			"UPDATE channels SET name = ?, type = ?, base_url = ?, channel_key = ?, models = ?, group_list = ?, priority = ?, weight = ?, model_mapping = ?, settings = ?, cost = ?, status = ?, updated_at = ? WHERE id = ?",
			c.Name, c.Type, c.BaseURL, c.Key, enc.models, enc.groups, c.Priority, c.Weight, enc.mapping, enc.settings, enc.cost, status, updated, c.ID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM abilities WHERE channel_id = ?"), c.ID); err != nil {
			return err
		}
		return r.s.writeAbilities(ctx, tx, c.ID, c, status)
	})
	if err != nil {
		return wrap(err, "update channel")
	}
	c.UpdatedAt, c.Status = updated, status
	return nil
}

// Delete removes the channel and its abilities together.
func (r channelRepo) Delete(ctx context.Context, id int64) error {
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM abilities WHERE channel_id = ?"), id); err != nil {
			return err
		}
		return r.s.execOne(ctx, tx, "delete channel", "DELETE FROM channels WHERE id = ?", id)
	})
	return wrap(err, "delete channel")
}

// abilityBatch keeps a multi-row insert well under every dialect's limit on
// bound parameters.
const abilityBatch = 500

// writeAbilities inserts one ability per distinct (group, model) pair of c.
func (s *Store) writeAbilities(ctx context.Context, tx *sql.Tx, channelID int64, c *store.Channel, status string) error {
	var args []any
	seen := map[[2]string]bool{}
	enabled := status == store.StatusEnabled
	for _, g := range c.Groups {
		for _, m := range c.Models {
			if seen[[2]string{g, m}] {
				continue
			}
			seen[[2]string{g, m}] = true
			args = append(args, g, m, channelID, c.Priority, c.Weight, enabled)
		}
	}
	const cols = 6
	for len(args) > 0 {
		n := min(len(args)/cols, abilityBatch)
		q := "INSERT INTO abilities (grp, model, channel_id, priority, weight, enabled) VALUES (?, ?, ?, ?, ?, ?)" +
			strings.Repeat(", (?, ?, ?, ?, ?, ?)", n-1)
		if _, err := tx.ExecContext(ctx, s.Rebind(q), args[:n*cols]...); err != nil {
			return err
		}
		args = args[n*cols:]
	}
	return nil
}

func (r channelRepo) Get(ctx context.Context, id int64) (*store.Channel, error) {
	return r.get(ctx, "id = ?", id)
}

func (r channelRepo) GetByName(ctx context.Context, name string) (*store.Channel, error) {
	return r.get(ctx, "name = ?", name)
}

func (r channelRepo) get(ctx context.Context, where string, arg any) (*store.Channel, error) {
	c, err := scanChannel(r.s.db.QueryRowContext(ctx, r.s.Rebind(channelSelect+" WHERE "+where), arg))
	if err != nil {
		return nil, wrap(err, "get channel")
	}
	return &c, nil
}

func (r channelRepo) List(ctx context.Context, p store.Page) ([]store.Channel, int, error) {
	total, err := r.s.count(ctx, "SELECT COUNT(*) FROM channels")
	if err != nil {
		return nil, 0, wrap(err, "count channels")
	}
	limit, offset := limitOffset(p)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(channelSelect+" ORDER BY id LIMIT ? OFFSET ?"), limit, offset)
	if err != nil {
		return nil, 0, wrap(err, "list channels")
	}
	out, err := collect(rows, scanChannel)
	if err != nil {
		return nil, 0, wrap(err, "list channels")
	}
	return out, total, nil
}

func (r channelRepo) All(ctx context.Context) ([]store.Channel, error) {
	rows, err := r.s.db.QueryContext(ctx, channelSelect+" ORDER BY id")
	if err != nil {
		return nil, wrap(err, "all channels")
	}
	out, err := collect(rows, scanChannel)
	return out, wrap(err, "all channels")
}

// Abilities returns the whole index ordered by group, model, then channel.
func (r channelRepo) Abilities(ctx context.Context) ([]store.Ability, error) {
	rows, err := r.s.db.QueryContext(ctx,
		"SELECT grp, model, channel_id, priority, weight, enabled FROM abilities ORDER BY grp, model, channel_id")
	if err != nil {
		return nil, wrap(err, "list abilities")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.Ability, error) {
		var a store.Ability
		return a, row.Scan(&a.Group, &a.Model, &a.ChannelID, &a.Priority, &a.Weight, &a.Enabled)
	})
	return out, wrap(err, "list abilities")
}
