package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// SessionCookie is the name of the console's session cookie.
const SessionCookie = "turnpike_session"

// Sessions issues and checks stateless session tokens signed with
// CRYPTO_SECRET, so every node with the same secret accepts them and a
// rotated secret logs everyone out.
type Sessions struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
}

// NewSessions returns a session signer.
func NewSessions(secret string, ttl time.Duration) *Sessions {
	return &Sessions{secret: []byte("session:" + secret), ttl: ttl, now: time.Now}
}

// Issue returns a signed token for userID and its expiry.
func (s *Sessions) Issue(userID int64) (string, time.Time) {
	exp := s.now().Add(s.ttl)
	payload := strconv.FormatInt(userID, 10) + "." + strconv.FormatInt(exp.Unix(), 10)
	return payload + "." + s.sign(payload), exp
}

// Verify returns the user id of a valid, unexpired token.
func (s *Sessions) Verify(token string) (int64, bool) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return 0, false
	}
	payload, sig := token[:i], token[i+1:]
	if !hmac.Equal([]byte(sig), []byte(s.sign(payload))) {
		return 0, false
	}
	idStr, expStr, ok := strings.Cut(payload, ".")
	if !ok {
		return 0, false
	}
	id, err1 := strconv.ParseInt(idStr, 10, 64)
	exp, err2 := strconv.ParseInt(expStr, 10, 64)
	if err1 != nil || err2 != nil || s.now().Unix() >= exp {
		return 0, false
	}
	return id, true
}

func (s *Sessions) sign(payload string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// HashPassword hashes a password for storage.
func HashPassword(pw string) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	return string(b), err
}

// CheckPassword reports whether pw matches the stored hash.
func CheckPassword(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
