package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var rotationTests = []namedTest{
	{"rotate with grace finds the key by the new hash and by the old one", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "alice", 0)
		tok := newToken(t, s, u, "k", -1)
		old := tok.KeyHash
		until := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		must(t, s.Tokens().Rotate(ctx(t), tok.ID, "new-hash", "sk-new...", &until), "rotate")
		byNew, err := s.Tokens().GetByHash(ctx(t), "new-hash")
		must(t, err, "get by new hash")
		if byNew.ID != tok.ID || byNew.KeyHash != "new-hash" || byNew.KeyMasked != "sk-new..." {
			t.Errorf("by new hash = %+v", *byNew)
		}
		byOld, err := s.Tokens().GetByHash(ctx(t), old)
		must(t, err, "get by old hash")
		if byOld.ID != tok.ID || byOld.PrevKeyHash != old || byOld.PrevUntil == nil || !byOld.PrevUntil.Equal(until) {
			t.Errorf("by old hash = %+v (prev until %v), want prev %q until %v", *byOld, byOld.PrevUntil, old, until)
		}
	}},
	{"rotate without grace forgets the old hash", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "bob", 0)
		tok := newToken(t, s, u, "k", -1)
		must(t, s.Tokens().Rotate(ctx(t), tok.ID, "fresh", "sk-f...", nil), "rotate")
		if _, err := s.Tokens().GetByHash(ctx(t), tok.KeyHash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("old hash after a rotation without grace: err = %v, want ErrNotFound", err)
		}
		got, err := s.Tokens().Get(ctx(t), tok.ID)
		must(t, err, "get")
		if got.PrevKeyHash != "" || got.PrevUntil != nil {
			t.Errorf("prev = %q until %v, want none", got.PrevKeyHash, got.PrevUntil)
		}
	}},
	{"a second rotation ends the first one's grace", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "carol", 0)
		tok := newToken(t, s, u, "k", -1)
		until := time.Now().Add(time.Hour).UTC()
		must(t, s.Tokens().Rotate(ctx(t), tok.ID, "second", "m2", &until), "first rotation")
		must(t, s.Tokens().Rotate(ctx(t), tok.ID, "third", "m3", &until), "second rotation")
		if _, err := s.Tokens().GetByHash(ctx(t), tok.KeyHash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("first hash after two rotations: err = %v, want ErrNotFound", err)
		}
		got, err := s.Tokens().GetByHash(ctx(t), "second")
		must(t, err, "second hash in grace")
		if got.ID != tok.ID || got.KeyHash != "third" {
			t.Errorf("by second hash = %+v", *got)
		}
	}},
	{"rotating a missing key is not found", func(t *testing.T, s store.Store) {
		if err := s.Tokens().Rotate(ctx(t), 987654, "h", "m", nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	}},
}
