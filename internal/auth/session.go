package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// SessionCookie is the name of the console's session cookie.
const SessionCookie = "turnpike_session"

// ErrNoSession is returned for a token that is malformed, forged, expired
// or ended; callers treat all of them as "not signed in".
var ErrNoSession = errors.New("auth: no such session")

// sweepEvery is how often Start clears ended sessions out of the store.
const sweepEvery = time.Hour

// Sessions issues console sessions and checks them on every request. A
// session is a row in the store, so logout and a password change end it on
// every node at once; the token is also signed with CRYPTO_SECRET, so
// garbage and forgeries are turned away without a database read and a
// rotated secret still signs everyone out.
type Sessions struct {
	st     store.SessionRepo
	secret []byte
	ttl    time.Duration
	now    func() time.Time

	sweepMu   sync.Mutex
	lastSweep time.Time
}

// Session is a resolved, live session.
type Session struct {
	UserID int64
	// IDHash identifies the session in the store without being a credential.
	IDHash    string
	ExpiresAt time.Time
}

// NewSessions returns sessions kept in st, each lasting ttl.
func NewSessions(st store.SessionRepo, secret string, ttl time.Duration) *Sessions {
	return &Sessions{st: st, secret: []byte("session:" + secret), ttl: ttl, now: time.Now}
}

// Start opens a session for userID and returns its token and expiry.
func (s *Sessions) Start(ctx context.Context, userID int64) (string, time.Time, error) {
	now := s.now()
	s.sweep(ctx, now)
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", time.Time{}, err
	}
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	exp := now.Add(s.ttl).Truncate(time.Second)
	row := &store.Session{IDHash: hashID(id), UserID: userID, CreatedAt: now, ExpiresAt: exp}
	if err := s.st.Create(ctx, row); err != nil {
		return "", time.Time{}, err
	}
	return s.format(id, exp.Unix()), exp, nil
}

// Resolve returns the live session behind token. A token that is not one
// of ours, has expired or was ended is ErrNoSession; a store failure is
// returned as it is.
func (s *Sessions) Resolve(ctx context.Context, token string) (*Session, error) {
	t, ok := s.parse(token)
	if !ok || s.now().Unix() >= t.exp {
		return nil, ErrNoSession
	}
	row, err := s.st.Get(ctx, hashID(t.id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, err
	}
	if !s.now().Before(row.ExpiresAt) {
		return nil, ErrNoSession
	}
	return &Session{UserID: row.UserID, IDHash: row.IDHash, ExpiresAt: row.ExpiresAt}, nil
}

// End ends the session behind token; an unknown token is already ended.
func (s *Sessions) End(ctx context.Context, token string) error {
	t, ok := s.parse(token)
	if !ok {
		return nil
	}
	return s.st.Delete(ctx, hashID(t.id))
}

// EndAll ends every session of userID except keep (an IDHash; empty keeps
// none), after a password change or when an account is locked.
func (s *Sessions) EndAll(ctx context.Context, userID int64, keep string) error {
	return s.st.DeleteUser(ctx, userID, keep)
}

// sweep drops ended sessions now and then, so the table does not grow
// with every sign-in that was never logged out. Failure only delays it.
func (s *Sessions) sweep(ctx context.Context, now time.Time) {
	s.sweepMu.Lock()
	due := now.Sub(s.lastSweep) >= sweepEvery
	if due {
		s.lastSweep = now
	}
	s.sweepMu.Unlock()
	if due {
		_, _ = s.st.DeleteExpired(ctx, now)
	}
}

// hashID is how a session id is stored: a database dump must not hold
// usable cookies.
func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// tokenPrefix versions the token format, so a later change can tell old
// tokens apart instead of misreading them.
const tokenPrefix = "s1"

// sessionIDLen is the base64url length of a 32-byte session id.
const sessionIDLen = 43

type sessionToken struct {
	id  string
	exp int64
}

func (s *Sessions) format(id string, exp int64) string {
	payload := tokenPrefix + "." + id + "." + strconv.FormatInt(exp, 10)
	return payload + "." + s.sign(payload)
}

// parse checks a token's shape and signature: "s1.<id>.<unix expiry>.<mac>".
func (s *Sessions) parse(token string) (sessionToken, bool) {
	if len(token) > 256 {
		return sessionToken{}, false
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return sessionToken{}, false
	}
	payload, sig := token[:i], token[i+1:]
	if !hmac.Equal([]byte(sig), []byte(s.sign(payload))) {
		return sessionToken{}, false
	}
	parts := strings.Split(payload, ".")
	if len(parts) != 3 || parts[0] != tokenPrefix || len(parts[1]) != sessionIDLen {
		return sessionToken{}, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || exp <= 0 {
		return sessionToken{}, false
	}
	return sessionToken{id: parts[1], exp: exp}, true
}

func (s *Sessions) sign(payload string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// HashPassword hashes a password for storage.
func HashPassword(pw string) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(pw), passwordCost())
	return string(b), err
}

// passwordCost is bcrypt's work factor for new hashes: the default, except
// inside a test binary. The suites create and check thousands of passwords
// (every seeded gateway has a root password), and at the default cost
// bcrypt was nine tenths of the admin suite's CPU and the largest part of
// CI's race run. A hash records its cost, so checking is the same either
// way, and a gateway binary is never a test binary.
func passwordCost() int {
	if testing.Testing() {
		return bcrypt.MinCost
	}
	return bcrypt.DefaultCost
}

// CheckPassword reports whether pw matches the stored hash.
func CheckPassword(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
