// Package accounts is the sign-in and money-in features beside the core
// entities: TOTP second factors and their recovery codes, identities at
// OpenID Connect providers, redemption codes and the audit log, kept through
// the store's repositories (sealed and hashed here first). It also holds
// the pieces of those features that have nothing to do with HTTP handling:
// code formats, sealing secrets, the OpenID Connect client and the audit
// middleware. The handlers live in internal/admin beside sign-in.
package accounts

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Store is the accounts features over the store's repositories: it seals
// and hashes what the repositories keep, and decides what a code or a
// second factor is worth.
type Store struct {
	st   store.Store
	seal *sealer
	now  func() time.Time
}

// NewStore works on st; secret (CRYPTO_SECRET) seals TOTP secrets, so the
// same value must be set on every node.
func NewStore(st store.Store, secret string) *Store {
	return &Store{st: st, seal: newSealer(secret, "totp"), now: time.Now}
}

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
