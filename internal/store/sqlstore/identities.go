package sqlstore

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type identityRepo struct{ s *Store }

// Identities returns the OpenID Connect identities linked to users.
func (s *Store) Identities() store.IdentityRepo { return identityRepo{s} }

func (r identityRepo) User(ctx context.Context, issuer, subject string) (int64, error) {
	var id int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT user_id FROM user_identities WHERE issuer = ? AND subject = ?"), issuer, subject).Scan(&id)
	return id, wrap(err, "identity")
}

func (r identityRepo) Of(ctx context.Context, issuer string, userID int64) (*store.Identity, error) {
	id := store.Identity{Issuer: issuer, UserID: userID}
	var created int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT subject, created_unix FROM user_identities WHERE issuer = ? AND user_id = ? ORDER BY id LIMIT 1"),
		issuer, userID).Scan(&id.Subject, &created)
	if err != nil {
		return nil, wrap(err, "identity")
	}
	id.LinkedAt = time.Unix(created, 0).UTC()
	return &id, nil
}

func (r identityRepo) Link(ctx context.Context, id store.Identity) error {
	if id.LinkedAt.IsZero() {
		id.LinkedAt = time.Now()
	}
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("INSERT INTO user_identities (issuer, subject, user_id, created_unix) VALUES (?, ?, ?, ?)"),
		id.Issuer, id.Subject, id.UserID, id.LinkedAt.Unix())
	return wrap(err, "identity")
}

func (r identityRepo) Unlink(ctx context.Context, issuer string, userID int64) (bool, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM user_identities WHERE issuer = ? AND user_id = ?"), issuer, userID)
	if err != nil {
		return false, wrap(err, "identity")
	}
	n, err := res.RowsAffected()
	return n > 0, wrap(err, "identity")
}
