package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// tokenRotationMigration keeps the hash a rotation replaced beside the new
// one, with the end of its grace, so every node reading the row honours the
// grace without a message between them.
var tokenRotationMigration = Migration{Version: 130, Name: "token rotation grace", SQL: `
ALTER TABLE tokens ADD prev_key_hash {{string}} NULL;
ALTER TABLE tokens ADD prev_until {{time}} NULL;
CREATE INDEX tokens_prev_key_hash_idx ON tokens (prev_key_hash)`}

// Rotate replaces the key's hash; see store.TokenRepo.
func (r tokenRepo) Rotate(ctx context.Context, id int64, hash, masked string, graceUntil *time.Time) error {
	return r.s.withTx(ctx, func(tx *sql.Tx) error {
		var old string
		if err := tx.QueryRowContext(ctx, r.s.Rebind("SELECT key_hash FROM tokens WHERE id = ?"), id).Scan(&old); err != nil {
			return wrap(err, "rotate token")
		}
		var prev sql.NullString
		if graceUntil != nil {
			prev = sql.NullString{String: old, Valid: true}
		}
		return r.s.execOne(ctx, tx, "rotate token",
			"UPDATE tokens SET key_hash = ?, key_masked = ?, prev_key_hash = ?, prev_until = ? WHERE id = ?",
			hash, masked, prev, nullTime(graceUntil), id)
	})
}
