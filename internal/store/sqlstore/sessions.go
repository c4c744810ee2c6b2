package sqlstore

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// sessionsMigration keeps console sessions. Expiry is Unix seconds rather
// than a timestamp column so that comparing it needs no dialect-specific
// time handling (SQLite keeps timestamps as text). The version is chosen
// away from the next free small numbers, which parallel work tends to take.
var sessionsMigration = Migration{
	Version: 21,
	Name:    "console sessions",
	SQL: `
CREATE TABLE sessions (
	id_hash {{string}} NOT NULL PRIMARY KEY,
	user_id {{bigint}} NOT NULL,
	created_unix {{bigint}} NOT NULL,
	expires_unix {{bigint}} NOT NULL
) {{options}};
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_unix);
`,
}

type sessionRepo struct{ s *Store }

func (r sessionRepo) Create(ctx context.Context, ss *store.Session) error {
	if ss.CreatedAt.IsZero() {
		ss.CreatedAt = time.Now()
	}
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("INSERT INTO sessions (id_hash, user_id, created_unix, expires_unix) VALUES (?, ?, ?, ?)"),
		ss.IDHash, ss.UserID, ss.CreatedAt.Unix(), ss.ExpiresAt.Unix())
	return wrap(err, "create session")
}

func (r sessionRepo) Get(ctx context.Context, idHash string) (*store.Session, error) {
	var ss store.Session
	var created, expires int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT id_hash, user_id, created_unix, expires_unix FROM sessions WHERE id_hash = ?"), idHash).
		Scan(&ss.IDHash, &ss.UserID, &created, &expires)
	if err != nil {
		return nil, wrap(err, "get session")
	}
	ss.CreatedAt, ss.ExpiresAt = time.Unix(created, 0).UTC(), time.Unix(expires, 0).UTC()
	return &ss, nil
}

func (r sessionRepo) Delete(ctx context.Context, idHash string) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM sessions WHERE id_hash = ?"), idHash)
	return wrap(err, "delete session")
}

func (r sessionRepo) DeleteUser(ctx context.Context, userID int64, keep string) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM sessions WHERE user_id = ? AND id_hash <> ?"), userID, keep)
	return wrap(err, "end sessions")
}

func (r sessionRepo) DeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM sessions WHERE expires_unix <= ?"), now.Unix())
	if err != nil {
		return 0, wrap(err, "delete expired sessions")
	}
	n, err := res.RowsAffected()
	return n, wrap(err, "delete expired sessions")
}
