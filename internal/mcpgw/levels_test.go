package mcpgw

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A team's or organisation's grant reaches its members' keys, and each
// level present narrows the others as a user's grant narrows a key's.
func TestTeamAndOrgGrantsReachMembersAndNarrowTheOtherLevels(t *testing.T) {
	grant := func(kind, subject string, servers ...string) store.MCPGrant {
		return store.MCPGrant{Kind: kind, Subject: subject, Servers: servers}
	}
	member := &auth.Principal{UserID: 2, TokenID: 1, TeamID: 7, OrgID: 9}
	outsider := &auth.Principal{UserID: 3, TokenID: 4}
	for _, tc := range []struct {
		name   string
		p      *auth.Principal
		grants []store.MCPGrant
		server string
		want   bool
	}{
		{"the team's grant alone", member, []store.MCPGrant{grant(store.SubjectTeam, "7", "a")}, "a", true},
		{"the org's grant alone", member, []store.MCPGrant{grant(store.SubjectOrg, "9", "a")}, "a", true},
		{"the org narrows the team", member, []store.MCPGrant{grant(store.SubjectTeam, "7", "a", "b"), grant(store.SubjectOrg, "9", "a")}, "b", false},
		{"the team narrows the user", member, []store.MCPGrant{grant(store.SubjectUser, "2", "*"), grant(store.SubjectTeam, "7", "a")}, "b", false},
		{"another team's grant is not the member's", member, []store.MCPGrant{grant(store.SubjectTeam, "8", "a")}, "a", false},
		{"a user in no team meets no team grant", outsider, []store.MCPGrant{grant(store.SubjectTeam, "0", "a"), grant(store.SubjectOrg, "0", "a")}, "a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := &registry{grants: map[grantKey]store.MCPGrant{}}
			for _, g := range tc.grants {
				reg.grants[grantKey{g.Kind, g.Subject}] = g
			}
			if got := reg.accessFor(levelsOf(tc.p)).server(tc.server); got != tc.want {
				t.Errorf("server(%s) = %v, want %v", tc.server, got, tc.want)
			}
		})
	}
}
