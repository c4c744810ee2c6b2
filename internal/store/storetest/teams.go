package storetest

import (
	"reflect"
	"testing"
	"time"

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
	{"a team's usage is summed by user, key and model over its window", func(t *testing.T, s store.Store) {
		base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		logs := []store.UsageLog{
			{Type: store.LogConsume, UserID: 1, TokenID: 11, Model: "a", Quota: 10, PromptTokens: 1, TeamID: 5, OrgID: 2, CreatedAt: base},
			{Type: store.LogConsume, UserID: 1, TokenID: 12, Model: "b", Quota: 20, CompletionTokens: 3, TeamID: 5, OrgID: 2, CreatedAt: base.Add(time.Hour)},
			{Type: store.LogConsume, UserID: 2, TokenID: 21, Model: "a", Quota: 40, TeamID: 5, OrgID: 2, CreatedAt: base.Add(2 * time.Hour)},
			{Type: store.LogError, UserID: 2, TokenID: 21, Model: "a", Quota: 0, TeamID: 5, OrgID: 2, CreatedAt: base.Add(2 * time.Hour)},
			{Type: store.LogConsume, UserID: 3, TokenID: 31, Model: "a", Quota: 80, TeamID: 6, OrgID: 2, CreatedAt: base.Add(time.Hour)},
			{Type: store.LogConsume, UserID: 1, TokenID: 11, Model: "a", Quota: 160, TeamID: 5, OrgID: 2, CreatedAt: base.Add(48 * time.Hour)},
		}
		must(t, s.Logs().Insert(ctx(t), logs), "insert")
		for _, c := range []struct {
			by   string
			want []store.UsageGroup
		}{
			{"user", []store.UsageGroup{{Key: "1", Requests: 2, PromptTokens: 1, CompletionTokens: 3, Quota: 30}, {Key: "2", Requests: 1, Quota: 40}}},
			{"key", []store.UsageGroup{{Key: "11", Requests: 1, PromptTokens: 1, Quota: 10}, {Key: "12", Requests: 1, CompletionTokens: 3, Quota: 20},
				{Key: "21", Requests: 1, Quota: 40}}},
			{"model", []store.UsageGroup{{Key: "a", Requests: 2, PromptTokens: 1, Quota: 50}, {Key: "b", Requests: 1, CompletionTokens: 3, Quota: 20}}},
		} {
			got, err := s.Teams().Usage(ctx(t), 5, base, base.Add(24*time.Hour), c.by)
			must(t, err, "usage by "+c.by)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("by %s: %+v, want %+v", c.by, got, c.want)
			}
		}
	}},
}
