package storetest

import (
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var responseTests = []namedTest{
	{"a remembered response is found with its channel, owner and time", func(t *testing.T, s store.Store) {
		at := time.UnixMilli(time.Now().UnixMilli()).UTC()
		must(t, s.Responses().Remember(ctx(t), "resp_1", 7, 9, at), "remember")
		ch, user, got, err := s.Responses().Lookup(ctx(t), "resp_1")
		if err != nil || ch != 7 || user != 9 || !got.Equal(at) {
			t.Fatalf("Lookup = %d %d %v %v", ch, user, got, err)
		}
		_, _, _, err = s.Responses().Lookup(ctx(t), "resp_missing")
		wantErr(t, err, store.ErrNotFound, "lookup of an unknown id")
	}},
	{"remembering an id again takes the latest owner", func(t *testing.T, s store.Store) {
		must(t, s.Responses().Remember(ctx(t), "resp_1", 1, 2, time.Now()), "remember")
		must(t, s.Responses().Remember(ctx(t), "resp_1", 3, 4, time.Now()), "remember again")
		if ch, user, _, err := s.Responses().Lookup(ctx(t), "resp_1"); err != nil || ch != 3 || user != 4 {
			t.Fatalf("Lookup = %d %d %v", ch, user, err)
		}
	}},
	{"prune deletes only entries older than the cut", func(t *testing.T, s store.Store) {
		now := time.Now()
		must(t, s.Responses().Remember(ctx(t), "old", 1, 1, now.Add(-48*time.Hour)), "remember old")
		must(t, s.Responses().Remember(ctx(t), "new", 1, 1, now), "remember new")
		must(t, s.Responses().Prune(ctx(t), now.Add(-24*time.Hour)), "prune")
		_, _, _, err := s.Responses().Lookup(ctx(t), "old")
		wantErr(t, err, store.ErrNotFound, "lookup of a pruned id")
		if _, _, _, err := s.Responses().Lookup(ctx(t), "new"); err != nil {
			t.Fatalf("a recent entry was pruned: %v", err)
		}
	}},
}
