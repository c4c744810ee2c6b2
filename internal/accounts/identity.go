package accounts

import (
	"context"
)

// IdentityUser returns the user signed in as subject at issuer, or
// store.ErrNotFound.
func (s *Store) IdentityUser(ctx context.Context, issuer, subject string) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, s.q("SELECT user_id FROM user_identities WHERE issuer = ? AND subject = ?"), issuer, subject).Scan(&id)
	return id, notFound(err)
}

// LinkIdentity records that subject at issuer is userID.
func (s *Store) LinkIdentity(ctx context.Context, issuer, subject string, userID int64) error {
	_, err := s.db.ExecContext(ctx, s.q("INSERT INTO user_identities (issuer, subject, user_id, created_unix) VALUES (?, ?, ?, ?)"),
		issuer, subject, userID, s.now().Unix())
	return err
}
