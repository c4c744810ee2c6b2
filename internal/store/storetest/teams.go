package storetest

import (
	"reflect"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var teamTests = []namedTest{
	{"an org and its team are stored with models, group and billing, and members join and leave", func(t *testing.T, s store.Store) {
		r := s.Teams()
		o := &store.Org{Name: "acme", Models: []string{"m-a"}, Group: "vip"}
		must(t, r.CreateOrg(ctx(t), o), "create org")
		tm := &store.Team{OrgID: o.ID, Name: "search", Billing: store.BillingShared}
		must(t, r.CreateTeam(ctx(t), tm), "create team")
		got, err := r.GetTeam(ctx(t), tm.ID)
		must(t, err, "get team")
		if got.OrgID != o.ID || got.Name != "search" || got.Billing != store.BillingShared || got.Quota != 0 || len(got.Models) != 0 {
			t.Fatalf("team %+v", got)
		}
		og, err := r.GetOrg(ctx(t), o.ID)
		must(t, err, "get org")
		if !reflect.DeepEqual(og.Models, []string{"m-a"}) || og.Group != "vip" {
			t.Fatalf("org %+v", og)
		}
		u := &store.User{Username: "member", Role: store.RoleUser, Group: "default"}
		must(t, s.Users().Create(ctx(t), u), "create user")
		must(t, r.SetMembership(ctx(t), u.ID, tm.ID, store.TeamManager), "join")
		members, err := r.Members(ctx(t), tm.ID)
		must(t, err, "members")
		if len(members) != 1 || members[0].ID != u.ID || members[0].TeamRole != store.TeamManager {
			t.Fatalf("members %+v", members)
		}
		wantErr(t, r.DeleteOrg(ctx(t), o.ID), store.ErrConflict, "delete an org that has a team")
		must(t, r.DeleteTeam(ctx(t), tm.ID), "delete team")
		back, err := s.Users().Get(ctx(t), u.ID)
		must(t, err, "get user")
		if back.TeamID != 0 || back.TeamRole != "" {
			t.Fatalf("a deleted team kept its member: %+v", back)
		}
		must(t, r.DeleteOrg(ctx(t), o.ID), "delete empty org")
	}},
}
