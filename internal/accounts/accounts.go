// Package accounts keeps what the sign-in and money-in features store beside
// the core tables: TOTP second factors and their recovery codes, identities
// at OpenID Connect providers, redemption codes and the audit log. It also
// holds the pieces of those features that have nothing to do with HTTP
// handling: code formats, sealing secrets, the OpenID Connect client and the
// audit middleware. The handlers live in internal/admin beside sign-in.
package accounts

import (
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// Store is the accounts tables in the gateway's database.
type Store struct {
	db   *sql.DB
	d    sqlstore.Dialect
	seal *sealer
	now  func() time.Time
}

// NewStore works on st's database; secret (CRYPTO_SECRET) seals TOTP
// secrets, so the same value must be set on every node.
func NewStore(st *sqlstore.Store, secret string) *Store {
	return &Store{db: st.DB(), d: st.SQLDialect(), seal: newSealer(secret, "totp"), now: time.Now}
}

func (s *Store) q(query string) string { return sqlstore.Rebind(s.d, query) }

// hashSecret is how codes (recovery and redemption) are stored: they carry
// at least 80 random bits, so an unsalted SHA-256 cannot be reversed and
// can be looked up.
func hashSecret(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("accounts: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return b
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// rowsAffected is 1 when a conditional UPDATE took.
func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
