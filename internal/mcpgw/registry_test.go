package mcpgw

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestAccessIsDeniedByDefaultAndEachLevelNarrowsTheOthers(t *testing.T) {
	key := func(servers, tools []string) store.MCPGrant {
		return store.MCPGrant{Kind: store.SubjectToken, Subject: "1", Servers: servers, Tools: tools}
	}
	user := func(servers, tools []string) store.MCPGrant {
		return store.MCPGrant{Kind: store.SubjectUser, Subject: "2", Servers: servers, Tools: tools}
	}
	for _, tc := range []struct {
		name         string
		grants       []store.MCPGrant
		server, tool string
		want         bool
	}{
		{"no grant at any level", nil, "a", "x", false},
		{"the key's server", []store.MCPGrant{key([]string{"a"}, nil)}, "a", "x", true},
		{"a server outside the key's", []store.MCPGrant{key([]string{"a"}, nil)}, "b", "x", false},
		{"every server", []store.MCPGrant{key([]string{"*"}, nil)}, "b", "x", true},
		{"a listed tool by full name", []store.MCPGrant{key([]string{"a"}, []string{"a__x"})}, "a", "x", true},
		{"a tool not listed", []store.MCPGrant{key([]string{"a"}, []string{"a__x"})}, "a", "y", false},
		{"a bare tool name", []store.MCPGrant{key([]string{"*"}, []string{"x"})}, "b", "x", true},
		{"every tool of a server", []store.MCPGrant{key([]string{"a", "b"}, []string{"a__*"})}, "a", "z", true},
		{"a tool entry does not grant its server", []store.MCPGrant{key([]string{"a"}, []string{"b__x"})}, "b", "x", false},
		{"the user's grant alone", []store.MCPGrant{user([]string{"a"}, nil)}, "a", "x", true},
		{"a key narrows its user", []store.MCPGrant{key([]string{"a"}, nil), user([]string{"a", "b"}, nil)}, "b", "x", false},
		{"a key cannot widen its user", []store.MCPGrant{key([]string{"a", "b"}, nil), user([]string{"a"}, nil)}, "b", "x", false},
		{"a user's tools narrow a key's server", []store.MCPGrant{key([]string{"a"}, nil), user([]string{"a"}, []string{"a__x"})}, "a", "y", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := &registry{grants: map[grantKey]store.MCPGrant{}}
			for _, g := range tc.grants {
				reg.grants[grantKey{g.Kind, g.Subject}] = g
			}
			a := reg.accessFor([]subject{{store.SubjectToken, 1}, {store.SubjectUser, 2}})
			if got := a.tool(tc.server, tc.tool); got != tc.want {
				t.Errorf("tool(%s, %s) = %v, want %v", tc.server, tc.tool, got, tc.want)
			}
		})
	}
}
