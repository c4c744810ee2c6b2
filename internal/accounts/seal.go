package accounts

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// sealer encrypts and authenticates small values with AES-256-GCM under a
// key derived from CRYPTO_SECRET and a purpose, so a value sealed for one
// purpose (a TOTP secret) cannot be passed off as another (a sign-in
// state cookie).
type sealer struct{ aead cipher.AEAD }

func newSealer(secret, purpose string) *sealer {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("turnpike accounts seal v1: " + purpose))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return &sealer{aead: aead}
}

func (s *sealer) seal(plain []byte) string {
	nonce := randomBytes(s.aead.NonceSize())
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, nil))
}

var errSealed = errors.New("accounts: sealed value is damaged or was sealed with another secret")

func (s *sealer) open(sealed string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return nil, errSealed
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return nil, errSealed
	}
	return plain, nil
}

// Sealer seals small values for another feature with its own purpose (the
// MCP gateway's session ids), so what one feature seals never opens as
// another's.
type Sealer struct{ s *sealer }

// NewSealer returns a sealer under CRYPTO_SECRET for purpose.
func NewSealer(secret, purpose string) *Sealer { return &Sealer{newSealer(secret, purpose)} }

// Seal encrypts and authenticates plain; the result is URL-safe base64.
func (s *Sealer) Seal(plain []byte) string { return s.s.seal(plain) }

// Open returns what Seal sealed, or an error for anything else.
func (s *Sealer) Open(sealed string) ([]byte, error) { return s.s.open(sealed) }
