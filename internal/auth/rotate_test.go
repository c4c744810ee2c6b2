package auth

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestARotatedKeyWorksUntilItsGraceEndsAndTheNewOneAtOnce(t *testing.T) {
	ctx := context.Background()
	k, st := keysOverSQLite(t)
	start := time.Now()
	now := start
	k.now = func() time.Time { return now }
	u := &store.User{Username: "u", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	const old = "sk-the-secret-before-rotation"
	tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: HashKey(old), KeyMasked: MaskKey(old), Quota: -1, Models: []string{}, Status: store.StatusEnabled}
	if err := st.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authenticate(ctx, old); err != nil {
		t.Fatalf("old key before rotation: %v", err)
	}
	fresh, err := RotateKey(ctx, st, tok.ID, 10*time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	k.Invalidate()
	steps := []struct {
		name    string
		at      time.Duration
		key     string
		allowed bool
	}{
		{"new key at once", 0, fresh, true},
		{"old key in its grace", time.Minute, old, true},
		{"old key just before the grace ends (served from cache)", 10*time.Minute - time.Second, old, true},
		{"old key when the grace ends, though it was cached", 10 * time.Minute, old, false},
		{"new key after the grace", 11 * time.Minute, fresh, true},
	}
	for _, s := range steps {
		now = start.Add(s.at)
		p, err := k.Authenticate(ctx, s.key)
		if s.allowed && (err != nil || p.TokenID != tok.ID) {
			t.Errorf("%s: refused: %v", s.name, err)
		}
		if !s.allowed && err == nil {
			t.Errorf("%s: accepted", s.name)
		}
	}
}

func TestRotationGraceIsBounded(t *testing.T) {
	_, st := keysOverSQLite(t)
	for _, g := range []time.Duration{-time.Second, MaxRotationGrace + time.Second} {
		if _, err := RotateKey(context.Background(), st, 1, g, time.Now()); err == nil {
			t.Errorf("grace %v accepted", g)
		}
	}
}
