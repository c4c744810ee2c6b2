package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var tokenTests = []namedTest{
	{"create then get by id, hash and name return every field", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "alice", 0)
		exp := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
		tok := &store.Token{UserID: u.ID, Name: "main", KeyHash: "abc123", KeyMasked: "sk-ab**23", Quota: 900,
			Models: []string{"gpt-4o", "claude"}, ExpiresAt: &exp, Status: store.StatusEnabled}
		must(t, s.Tokens().Create(ctx(t), tok), "create")
		if tok.ID == 0 {
			t.Fatal("Create left ID zero")
		}
		for name, get := range map[string]func() (*store.Token, error){
			"Get":       func() (*store.Token, error) { return s.Tokens().Get(ctx(t), tok.ID) },
			"GetByHash": func() (*store.Token, error) { return s.Tokens().GetByHash(ctx(t), "abc123") },
			"GetByName": func() (*store.Token, error) { return s.Tokens().GetByName(ctx(t), u.ID, "main") },
		} {
			got, err := get()
			must(t, err, name)
			if got.ID != tok.ID || got.UserID != u.ID || got.Name != "main" || got.KeyHash != "abc123" || got.KeyMasked != "sk-ab**23" ||
				got.Quota != 900 || got.UsedQuota != 0 || got.Status != store.StatusEnabled || !slices.Equal(got.Models, tok.Models) {
				t.Errorf("%s = %+v, want %+v", name, *got, *tok)
			}
			if got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) || got.ExpiresAt.Location() != time.UTC {
				t.Errorf("%s ExpiresAt = %v, want %v", name, got.ExpiresAt, exp)
			}
			if !sameTime(got.CreatedAt, tok.CreatedAt) {
				t.Errorf("%s CreatedAt = %v, want %v", name, got.CreatedAt, tok.CreatedAt)
			}
		}
	}},
	{"nil models and expiry read back as empty list and nil", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "bob", 0)
		tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: "h", KeyMasked: "m", Quota: -1}
		must(t, s.Tokens().Create(ctx(t), tok), "create")
		got, err := s.Tokens().Get(ctx(t), tok.ID)
		must(t, err, "get")
		if got.Models == nil || len(got.Models) != 0 || got.ExpiresAt != nil || got.Quota != -1 {
			t.Errorf("got models %#v expires %v quota %d", got.Models, got.ExpiresAt, got.Quota)
		}
	}},
	{"unique hash and per-user name conflict", func(t *testing.T, s store.Store) {
		a, b := newUser(t, s, "a", 0), newUser(t, s, "b", 0)
		newToken(t, s, a, "k1", -1)
		cases := []struct {
			name string
			tok  store.Token
			want error
		}{
			{"same hash for another user", store.Token{UserID: b.ID, Name: "other", KeyHash: "hash-" + itoa(a.ID) + "-k1"}, store.ErrConflict},
			{"same name for the same user", store.Token{UserID: a.ID, Name: "k1", KeyHash: "fresh"}, store.ErrConflict},
			{"same name for another user is fine", store.Token{UserID: b.ID, Name: "k1", KeyHash: "fresh2"}, nil},
			{"unknown user is not found", store.Token{UserID: 424242, Name: "x", KeyHash: "fresh3"}, store.ErrNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tok := tc.tok
				err := s.Tokens().Create(ctx(t), &tok)
				if tc.want == nil {
					must(t, err, "create")
					return
				}
				wantErr(t, err, tc.want, "create")
			})
		}
	}},
	{"missing token is not found everywhere", func(t *testing.T, s store.Store) {
		_, err := s.Tokens().Get(ctx(t), 77)
		wantErr(t, err, store.ErrNotFound, "Get")
		_, err = s.Tokens().GetByHash(ctx(t), "nope")
		wantErr(t, err, store.ErrNotFound, "GetByHash")
		_, err = s.Tokens().GetByName(ctx(t), 1, "nope")
		wantErr(t, err, store.ErrNotFound, "GetByName")
		wantErr(t, s.Tokens().Update(ctx(t), &store.Token{ID: 77, Name: "x"}), store.ErrNotFound, "Update")
		wantErr(t, s.Tokens().Delete(ctx(t), 77), store.ErrNotFound, "Delete")
	}},
	{"update writes name, models, expiry and status but not quota", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "carol", 0)
		tok := newToken(t, s, u, "k", 50)
		exp := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		tok.Name, tok.Models, tok.ExpiresAt, tok.Status, tok.Quota = "renamed", []string{"m1"}, &exp, store.StatusDisabled, 9999
		must(t, s.Tokens().Update(ctx(t), tok), "update")
		got, err := s.Tokens().Get(ctx(t), tok.ID)
		must(t, err, "get")
		if got.Name != "renamed" || !slices.Equal(got.Models, []string{"m1"}) || got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) ||
			got.Status != store.StatusDisabled || got.Quota != 50 {
			t.Errorf("after update: %+v", *got)
		}
		tok.ExpiresAt = nil
		must(t, s.Tokens().Update(ctx(t), tok), "clear expiry")
		got, err = s.Tokens().Get(ctx(t), tok.ID)
		must(t, err, "get")
		if got.ExpiresAt != nil {
			t.Errorf("expiry not cleared: %v", got.ExpiresAt)
		}
	}},
	{"list filters by user and pages in id order", func(t *testing.T, s store.Store) {
		a, b := newUser(t, s, "a", 0), newUser(t, s, "b", 0)
		var aIDs []int64
		for _, n := range []string{"k1", "k2", "k3"} {
			aIDs = append(aIDs, newToken(t, s, a, n, -1).ID)
			newToken(t, s, b, n, -1)
		}
		got, total, err := s.Tokens().List(ctx(t), a.ID, store.Page{Page: 1, PageSize: 2})
		must(t, err, "list a")
		if total != 3 || len(got) != 2 || got[0].ID != aIDs[0] || got[1].ID != aIDs[1] {
			t.Errorf("list a: total %d, got %+v", total, got)
		}
		_, total, err = s.Tokens().List(ctx(t), 0, store.Page{})
		must(t, err, "list all")
		if total != 6 {
			t.Errorf("list all total = %d, want 6", total)
		}
	}},
	{"list by owner role keeps what an administrator may manage", func(t *testing.T, s store.Store) {
		user, self := newUser(t, s, "plain", 0), newUser(t, s, "self", 0)
		boss := &store.User{Username: "boss", PasswordHash: "h", Role: store.RoleRoot, Group: "default", Status: store.StatusEnabled}
		must(t, s.Users().Create(ctx(t), boss), "create root")
		self.Role = store.RoleAdmin
		must(t, s.Users().Update(ctx(t), self), "make self an admin")
		mine, theirs := newToken(t, s, self, "mine", -1), newToken(t, s, user, "theirs", -1)
		newToken(t, s, boss, "roots", -1)
		got, total, err := s.Tokens().ListFiltered(ctx(t), store.TokenFilter{OwnerRoles: []string{store.RoleUser}, Self: self.ID}, store.Page{})
		must(t, err, "list")
		if total != 2 || len(got) != 2 || got[0].ID != mine.ID || got[1].ID != theirs.ID {
			t.Errorf("got total %d %+v, want the admin's own key and the user's", total, got)
		}
		_, total, err = s.Tokens().ListFiltered(ctx(t), store.TokenFilter{UserID: boss.ID, OwnerRoles: []string{store.RoleUser}, Self: self.ID}, store.Page{})
		must(t, err, "list root's")
		if total != 0 {
			t.Errorf("root's keys listed for an administrator: total %d", total)
		}
	}},
	{"set quota switches between limited and unlimited and leaves used quota", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "e", 0)
		tok := newToken(t, s, u, "k", 40)
		must(t, s.Ledger().Apply(ctx(t), []store.LedgerEntry{
			{Key: "use", Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID, Delta: -10, TokenDelta: -10, Used: 10},
		}), "apply")
		for _, want := range []int64{-1, 0, 250} {
			must(t, s.Tokens().SetQuota(ctx(t), tok.ID, want), "set quota")
			got, err := s.Tokens().Get(ctx(t), tok.ID)
			must(t, err, "get")
			if got.Quota != want || got.UsedQuota != 10 {
				t.Errorf("after SetQuota(%d): quota %d used %d, want %d and 10", want, got.Quota, got.UsedQuota, want)
			}
		}
		if delta, _, err := s.Ledger().Sum(ctx(t), u.ID); err != nil || delta != -10 {
			t.Errorf("SetQuota touched the ledger: Sum = %d (%v), want -10", delta, err)
		}
	}},
	{"set quota rejects a missing key and quotas below -1", func(t *testing.T, s store.Store) {
		wantErr(t, s.Tokens().SetQuota(ctx(t), 4040, 5), store.ErrNotFound, "SetQuota on a missing key")
		u := newUser(t, s, "f", 0)
		tok := newToken(t, s, u, "k", 7)
		if err := s.Tokens().SetQuota(ctx(t), tok.ID, -2); err == nil {
			t.Error("SetQuota(-2) succeeded")
		}
		if got, err := s.Tokens().Get(ctx(t), tok.ID); err != nil || got.Quota != 7 {
			t.Errorf("quota after a rejected SetQuota = %v (%v), want 7", got, err)
		}
	}},
	{"delete removes the token", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "d", 0)
		tok := newToken(t, s, u, "k", -1)
		must(t, s.Tokens().Delete(ctx(t), tok.ID), "delete")
		_, err := s.Tokens().Get(ctx(t), tok.ID)
		wantErr(t, err, store.ErrNotFound, "get after delete")
	}},
}
