// Package auth turns credentials into a principal: API keys for the model
// surfaces, the root token and session cookies for /api. Key lookups are
// cached so the hot path does no database read for a known key.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"

	"github.com/turnpike-gw/turnpike/internal/store"
)

const keyAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// NewKey returns a fresh API key: "sk-" and 48 random base62 characters.
func NewKey() string {
	b := make([]byte, 48)
	max := big.NewInt(int64(len(keyAlphabet)))
	for i := range b {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("auth: crypto/rand failed: " + err.Error())
		}
		b[i] = keyAlphabet[n.Int64()]
	}
	return "sk-" + string(b)
}

// HashKey is how keys are stored: hex SHA-256. Keys are long random strings,
// so a fast hash is enough and keeps every request's lookup cheap.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	// Encoded on the stack: hex.EncodeToString makes the bytes and then
	// the string, and every call's key is hashed.
	var text [2 * sha256.Size]byte
	hex.Encode(text[:], sum[:])
	return string(text[:])
}

// MaskKey shows enough of a key to recognise it and nothing more, as
// every other secret is shown (store.MaskSecret).
func MaskKey(key string) string { return store.MaskSecret(key) }
