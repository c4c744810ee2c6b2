package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func newSession(t *testing.T, s store.Store, id string, userID int64, expires time.Time) {
	t.Helper()
	must(t, s.Sessions().Create(ctx(t), &store.Session{IDHash: id, UserID: userID, ExpiresAt: expires}), "create session "+id)
}

func sessionExists(t *testing.T, s store.Store, id string) bool {
	t.Helper()
	_, err := s.Sessions().Get(ctx(t), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get session %s: %v", id, err)
	}
	return err == nil
}

var sessionTests = []namedTest{
	{"a created session reads back with its user and expiry", func(t *testing.T, s store.Store) {
		exp := time.Now().Add(time.Hour).Truncate(time.Second)
		newSession(t, s, "h1", 7, exp)
		got, err := s.Sessions().Get(ctx(t), "h1")
		must(t, err, "get")
		if got.UserID != 7 || !got.ExpiresAt.Equal(exp) || got.CreatedAt.IsZero() {
			t.Fatalf("got %+v, want user 7 expiring %v", got, exp)
		}
	}},
	{"a missing session is not found", func(t *testing.T, s store.Store) {
		_, err := s.Sessions().Get(ctx(t), "nope")
		wantErr(t, err, store.ErrNotFound, "get")
	}},
	{"delete ends one session and tolerates a missing one", func(t *testing.T, s store.Store) {
		exp := time.Now().Add(time.Hour)
		newSession(t, s, "a", 1, exp)
		newSession(t, s, "b", 1, exp)
		must(t, s.Sessions().Delete(ctx(t), "a"), "delete a")
		must(t, s.Sessions().Delete(ctx(t), "a"), "delete a again")
		if sessionExists(t, s, "a") || !sessionExists(t, s, "b") {
			t.Fatal("delete removed the wrong sessions")
		}
	}},
	{"delete user ends every session of that user but the kept one", func(t *testing.T, s store.Store) {
		exp := time.Now().Add(time.Hour)
		newSession(t, s, "keep", 1, exp)
		newSession(t, s, "other", 1, exp)
		newSession(t, s, "someone-else", 2, exp)
		must(t, s.Sessions().DeleteUser(ctx(t), 1, "keep"), "delete user")
		if !sessionExists(t, s, "keep") || sessionExists(t, s, "other") || !sessionExists(t, s, "someone-else") {
			t.Fatal("DeleteUser removed the wrong sessions")
		}
		must(t, s.Sessions().DeleteUser(ctx(t), 1, ""), "delete all")
		if sessionExists(t, s, "keep") {
			t.Fatal("DeleteUser with no kept session left one")
		}
	}},
	{"delete expired removes only ended sessions", func(t *testing.T, s store.Store) {
		now := time.Now()
		newSession(t, s, "old", 1, now.Add(-time.Minute))
		newSession(t, s, "live", 1, now.Add(time.Hour))
		n, err := s.Sessions().DeleteExpired(ctx(t), now)
		must(t, err, "delete expired")
		if n != 1 || sessionExists(t, s, "old") || !sessionExists(t, s, "live") {
			t.Fatalf("DeleteExpired removed %d; want only the ended one", n)
		}
	}},
}
