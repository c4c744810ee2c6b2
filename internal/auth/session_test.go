package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// memSessions is an in-memory store.SessionRepo for tests.
type memSessions struct {
	mu   sync.Mutex
	rows map[string]store.Session
}

func newMemSessions() *memSessions { return &memSessions{rows: map[string]store.Session{}} }

func (m *memSessions) Create(_ context.Context, s *store.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[s.IDHash] = *s
	return nil
}

func (m *memSessions) Get(_ context.Context, h string) (*store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.rows[h]
	if !ok {
		return nil, store.ErrNotFound
	}
	return &s, nil
}

func (m *memSessions) Delete(_ context.Context, h string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rows, h)
	return nil
}

func (m *memSessions) DeleteUser(_ context.Context, userID int64, keep string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, s := range m.rows {
		if s.UserID == userID && h != keep {
			delete(m.rows, h)
		}
	}
	return nil
}

func (m *memSessions) DeleteExpired(_ context.Context, now time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for h, s := range m.rows {
		if !now.Before(s.ExpiresAt) {
			delete(m.rows, h)
			n++
		}
	}
	return n, nil
}

func startSession(t *testing.T, s *Sessions, userID int64) string {
	t.Helper()
	tok, _, err := s.Start(context.Background(), userID)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return tok
}

func TestSessionResolve(t *testing.T) {
	ctx := context.Background()
	st := newMemSessions()
	s := NewSessions(st, "secret", time.Hour)
	tok := startSession(t, s, 42)
	other := startSession(t, s, 42)
	flip := func(tok string) string {
		b := []byte(tok)
		b[5] ^= 1
		return string(b)
	}
	cases := []struct {
		name  string
		setup func() string
		ok    bool
	}{
		{"a fresh session resolves to its user", func() string { return tok }, true},
		{"a token signed with another secret is refused", func() string {
			return startSession(t, NewSessions(st, "rotated", time.Hour), 42)
		}, false},
		{"a token with a changed id is refused", func() string { return flip(tok) }, false},
		{"junk is refused", func() string { return "s1.a.b.c" }, false},
		{"an ended session is refused", func() string {
			tok := startSession(t, s, 42)
			if err := s.End(ctx, tok); err != nil {
				t.Fatal(err)
			}
			return tok
		}, false},
		{"ending all of a user's sessions but one keeps that one", func() string {
			keep, err := s.Resolve(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.EndAll(ctx, 42, keep.IDHash); err != nil {
				t.Fatal(err)
			}
			return other
		}, true},
		{"the sessions ended with the others are refused", func() string { return tok }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Resolve(ctx, tc.setup())
			if tc.ok != (err == nil) {
				t.Fatalf("Resolve: err %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && got.UserID != 42 {
				t.Fatalf("user %d, want 42", got.UserID)
			}
			if !tc.ok && !errors.Is(err, ErrNoSession) {
				t.Fatalf("err %v, want ErrNoSession", err)
			}
		})
	}
}

func TestSessionExpires(t *testing.T) {
	s := NewSessions(newMemSessions(), "secret", time.Hour)
	tok := startSession(t, s, 1)
	s.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := s.Resolve(context.Background(), tok); !errors.Is(err, ErrNoSession) {
		t.Fatalf("expired session: %v, want ErrNoSession", err)
	}
}

func TestSessionTokensAreUniqueAndStoredOnlyAsHashes(t *testing.T) {
	st := newMemSessions()
	s := NewSessions(st, "secret", time.Hour)
	a, b := startSession(t, s, 1), startSession(t, s, 1)
	if a == b {
		t.Fatal("two sessions share a token")
	}
	for h := range st.rows {
		if strings.Contains(a, h) || strings.Contains(b, h) {
			t.Fatal("the store holds the session id itself")
		}
	}
}

// FuzzSessionTokenParse feeds the token parser arbitrary cookies: it must
// never panic, and whatever it accepts must be exactly the token this
// signer would write for that id and expiry, so no second spelling of a
// token (and no token without our signature) gets through.
func FuzzSessionTokenParse(f *testing.F) {
	// Fuzz workers are separate processes, so the seed token must not
	// depend on randomness.
	s := NewSessions(newMemSessions(), "k", time.Hour)
	tok := s.format(strings.Repeat("A", sessionIDLen), 1795608727)
	for _, seed := range []string{tok, "", ".", "s1", "s1...", "s1.a.1.x", "1.2.x", tok + ".", "." + tok,
		strings.Replace(tok, "s1.", "s2.", 1), strings.Replace(tok, ".1795608727.", ".01795608727.", 1),
		strings.Repeat("a.", 200)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := s.parse(in)
		if ok && in != s.format(got.id, got.exp) {
			t.Fatalf("token %q accepted as %+v but is not the signer's own spelling", in, got)
		}
	})
}
