package sqlstore

import "context"

// Secretless counts the records an import without secrets left without
// one (an export without --with-secrets writes placeholders, see dump.go):
// users who cannot sign in, keys that authenticate nothing and channels
// without a provider key. The start warns about them.
type Secretless struct{ Users, Tokens, Channels int }

// CountSecretless reads those counts.
func (s *Store) CountSecretless(ctx context.Context) (Secretless, error) {
	var c Secretless
	err := s.db.QueryRowContext(ctx, s.Rebind(`SELECT
		(SELECT COUNT(*) FROM users WHERE password_hash = ''),
		(SELECT COUNT(*) FROM tokens WHERE key_hash LIKE 'exported-without-secret:%'),
		(SELECT COUNT(*) FROM channels WHERE channel_key = '')`)).Scan(&c.Users, &c.Tokens, &c.Channels)
	return c, wrap(err, "count records without secrets")
}
