package storetest

import (
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var userTests = []namedTest{
	{"create fills id and created_at and get returns every field", func(t *testing.T, s store.Store) {
		u := &store.User{Username: "alice", PasswordHash: "h1", Role: store.RoleAdmin, Group: "vip", Quota: 500, UsedQuota: 7, Status: store.StatusEnabled,
			TeamID: 4, TeamRole: store.TeamManager}
		must(t, s.Users().Create(ctx(t), u), "create")
		if u.ID == 0 {
			t.Fatal("Create left ID zero")
		}
		checkUTC(t, "CreatedAt", u.CreatedAt)
		for _, get := range []func() (*store.User, error){
			func() (*store.User, error) { return s.Users().Get(ctx(t), u.ID) },
			func() (*store.User, error) { return s.Users().GetByUsername(ctx(t), "alice") },
		} {
			got, err := get()
			must(t, err, "get")
			checkUTC(t, "got.CreatedAt", got.CreatedAt)
			if !sameTime(got.CreatedAt, u.CreatedAt) {
				t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, u.CreatedAt)
			}
			got.CreatedAt = u.CreatedAt
			if *got != *u {
				t.Errorf("got %+v, want %+v", *got, *u)
			}
		}
	}},
	{"duplicate username is a conflict", func(t *testing.T, s store.Store) {
		newUser(t, s, "bob", 0)
		err := s.Users().Create(ctx(t), &store.User{Username: "bob", Role: store.RoleUser, Group: "default"})
		wantErr(t, err, store.ErrConflict, "second bob")
	}},
	{"missing user is not found on get, update and delete", func(t *testing.T, s store.Store) {
		_, err := s.Users().Get(ctx(t), 999)
		wantErr(t, err, store.ErrNotFound, "Get")
		_, err = s.Users().GetByUsername(ctx(t), "nobody")
		wantErr(t, err, store.ErrNotFound, "GetByUsername")
		wantErr(t, s.Users().Update(ctx(t), &store.User{ID: 999, Username: "x"}), store.ErrNotFound, "Update")
		wantErr(t, s.Users().Delete(ctx(t), 999), store.ErrNotFound, "Delete")
	}},
	{"update writes profile fields but never the balance", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "carol", 100)
		u.Username, u.PasswordHash, u.Role, u.Group, u.Status = "carol2", "h2", store.RoleAdmin, "vip", store.StatusDisabled
		u.Quota, u.UsedQuota = 1_000_000, 55
		must(t, s.Users().Update(ctx(t), u), "update")
		got, err := s.Users().Get(ctx(t), u.ID)
		must(t, err, "get")
		if got.Username != "carol2" || got.PasswordHash != "h2" || got.Role != store.RoleAdmin || got.Group != "vip" || got.Status != store.StatusDisabled {
			t.Errorf("profile not updated: %+v", *got)
		}
		if got.Quota != 100 || got.UsedQuota != 0 {
			t.Errorf("balance changed by Update: quota %d used %d", got.Quota, got.UsedQuota)
		}
	}},
	{"update with unchanged values succeeds", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "dave", 0)
		must(t, s.Users().Update(ctx(t), u), "update unchanged")
	}},
	{"update to a taken username is a conflict", func(t *testing.T, s store.Store) {
		newUser(t, s, "erin", 0)
		u := newUser(t, s, "frank", 0)
		u.Username = "erin"
		wantErr(t, s.Users().Update(ctx(t), u), store.ErrConflict, "rename to erin")
	}},
	{"delete removes the user and its tokens", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "gina", 0)
		tok := newToken(t, s, u, "k", -1)
		must(t, s.Users().Delete(ctx(t), u.ID), "delete")
		_, err := s.Users().Get(ctx(t), u.ID)
		wantErr(t, err, store.ErrNotFound, "get after delete")
		_, err = s.Tokens().Get(ctx(t), tok.ID)
		wantErr(t, err, store.ErrNotFound, "token after user delete")
	}},
	{"list pages in id order with the total", func(t *testing.T, s store.Store) {
		var ids []int64
		for i := range 5 {
			ids = append(ids, newUser(t, s, "user"+string(rune('a'+i)), 0).ID)
		}
		cases := []struct {
			name    string
			page    store.Page
			wantIDs []int64
		}{
			{"zero page means first page of twenty", store.Page{}, ids},
			{"second page of two", store.Page{Page: 2, PageSize: 2}, ids[2:4]},
			{"last partial page", store.Page{Page: 3, PageSize: 2}, ids[4:]},
			{"page past the end is empty", store.Page{Page: 9, PageSize: 2}, nil},
			{"oversized page is capped, not rejected", store.Page{Page: 1, PageSize: 1_000_000}, ids},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, total, err := s.Users().List(ctx(t), tc.page)
				must(t, err, "list")
				if total != 5 {
					t.Errorf("total = %d, want 5", total)
				}
				if len(got) != len(tc.wantIDs) {
					t.Fatalf("got %d users, want %d", len(got), len(tc.wantIDs))
				}
				for i, u := range got {
					if u.ID != tc.wantIDs[i] {
						t.Errorf("item %d id = %d, want %d", i, u.ID, tc.wantIDs[i])
					}
				}
			})
		}
	}},
	{"explicit created_at is kept in UTC", func(t *testing.T, s store.Store) {
		when := time.Date(2024, 3, 1, 12, 30, 45, 123456000, time.FixedZone("X", 5*3600))
		u := &store.User{Username: "henry", Role: store.RoleUser, Group: "default", CreatedAt: when}
		must(t, s.Users().Create(ctx(t), u), "create")
		got, err := s.Users().Get(ctx(t), u.ID)
		must(t, err, "get")
		checkUTC(t, "CreatedAt", got.CreatedAt)
		if !got.CreatedAt.Equal(when) {
			t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, when)
		}
	}},
}

var groupTests = []namedTest{
	{"upsert inserts then overwrites the ratio", func(t *testing.T, s store.Store) {
		must(t, s.Groups().Upsert(ctx(t), store.Group{Name: "vip", Ratio: 0.8}), "insert vip")
		must(t, s.Groups().Upsert(ctx(t), store.Group{Name: "default", Ratio: 1}), "insert default")
		must(t, s.Groups().Upsert(ctx(t), store.Group{Name: "vip", Ratio: 0.5}), "overwrite vip")
		got, err := s.Groups().List(ctx(t))
		must(t, err, "list")
		want := []store.Group{{Name: "default", Ratio: 1}, {Name: "vip", Ratio: 0.5}}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("List = %+v, want %+v", got, want)
		}
	}},
	{"delete removes and a second delete is not found", func(t *testing.T, s store.Store) {
		must(t, s.Groups().Upsert(ctx(t), store.Group{Name: "vip", Ratio: 2}), "insert")
		must(t, s.Groups().Delete(ctx(t), "vip"), "delete")
		wantErr(t, s.Groups().Delete(ctx(t), "vip"), store.ErrNotFound, "second delete")
		got, err := s.Groups().List(ctx(t))
		must(t, err, "list")
		if len(got) != 0 {
			t.Errorf("List after delete = %+v", got)
		}
	}},
}
