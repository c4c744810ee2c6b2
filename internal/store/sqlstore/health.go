package sqlstore

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// healthMigrations keep channel health shared by every node (version 40)
// and the fallback models of a price (41). They live in their own file so
// that the core schema stays one block.
var healthMigrations = []Migration{{
	Version: 40,
	Name:    "channel_health",
	// Times are unix milliseconds: one integer compares the same way on
	// every dialect and needs no NULL handling for "none" (0).
	SQL: `
CREATE TABLE channel_health (
	channel_id {{bigint}} NOT NULL,
	key_index {{int}} NOT NULL,
	state {{string}} NOT NULL,
	reason {{text}} NOT NULL,
	since_ms {{bigint}} NOT NULL,
	until_ms {{bigint}} NOT NULL,
	cooldown_ms {{bigint}} NOT NULL,
	next_probe_ms {{bigint}} NOT NULL,
	version {{bigint}} NOT NULL,
	PRIMARY KEY (channel_id, key_index)
) {{options}}`,
}, {
	Version: 41,
	Name:    "model_price_fallbacks",
	SQL:     `ALTER TABLE model_prices ADD fallbacks {{text}} NULL`,
}}

// Health returns the channel health records.
func (s *Store) Health() store.HealthRepo { return healthRepo{s} }

type healthRepo struct{ s *Store }

var _ store.HealthRepo = healthRepo{}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func (r healthRepo) All(ctx context.Context) ([]store.ChannelHealth, error) {
	rows, err := r.s.pollQuery(ctx, "SELECT channel_id, key_index, state, reason, since_ms, until_ms, cooldown_ms, next_probe_ms, version FROM channel_health")
	if err != nil {
		return nil, wrap(err, "list channel health")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.ChannelHealth, error) {
		var h store.ChannelHealth
		var since, until, cool, probe int64
		err := row.Scan(&h.ChannelID, &h.KeyIndex, &h.State, &h.Reason, &since, &until, &cool, &probe, &h.Version)
		h.Since, h.Until, h.NextProbe = fromMS(since), fromMS(until), fromMS(probe)
		h.Cooldown = time.Duration(cool) * time.Millisecond
		return h, err
	})
	return out, wrap(err, "list channel health")
}

func (r healthRepo) Swap(ctx context.Context, h store.ChannelHealth, version int64) (bool, error) {
	args := []any{h.State, h.Reason, ms(h.Since), ms(h.Until), h.Cooldown.Milliseconds(), ms(h.NextProbe)}
	if version == 0 {
		_, err := r.s.db.ExecContext(ctx, r.s.Rebind(`INSERT INTO channel_health
			(state, reason, since_ms, until_ms, cooldown_ms, next_probe_ms, version, channel_id, key_index)
			VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)`), append(args, h.ChannelID, h.KeyIndex)...)
		if err != nil && classify(err) == classUnique {
			return false, nil
		}
		return err == nil, wrap(err, "insert channel health")
	}
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(`UPDATE channel_health SET state = ?, reason = ?, since_ms = ?,
		until_ms = ?, cooldown_ms = ?, next_probe_ms = ?, version = version + 1
		WHERE channel_id = ? AND key_index = ? AND version = ?`), append(args, h.ChannelID, h.KeyIndex, version)...)
	if err != nil {
		return false, wrap(err, "update channel health")
	}
	n, err := res.RowsAffected()
	return n == 1, wrap(err, "update channel health")
}

func (r healthRepo) LeaseProbe(ctx context.Context, channelID int64, keyIndex int, due, next time.Time) (bool, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(`UPDATE channel_health SET next_probe_ms = ?
		WHERE channel_id = ? AND key_index = ? AND state = 'auto_disabled' AND next_probe_ms = ?`),
		ms(next), channelID, keyIndex, ms(due))
	if err != nil {
		return false, wrap(err, "lease channel probe")
	}
	n, err := res.RowsAffected()
	return n == 1, wrap(err, "lease channel probe")
}

func (r healthRepo) Reset(ctx context.Context, channelID int64, reason string, at time.Time) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind(`UPDATE channel_health SET state = 'healthy', reason = ?, since_ms = ?,
		until_ms = 0, cooldown_ms = 0, next_probe_ms = 0, version = version + 1 WHERE channel_id = ?`), reason, ms(at), channelID)
	return wrap(err, "reset channel health")
}

func (r healthRepo) Delete(ctx context.Context, channelID int64) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM channel_health WHERE channel_id = ?"), channelID)
	return wrap(err, "delete channel health")
}
