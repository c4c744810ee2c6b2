package admin

import (
	"context"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A key and a group take the same log_content object (CONTRACT §20), with
// the contract's defaults for members left out; only administrators set a
// key's, since whether calls are recorded is the operator's decision.
func TestLogContentOnKeysAndGroups(t *testing.T) {
	e := newEnv(t)
	_, _ = e.createKey("alice", "alicekey", `{"name":"alice-1"}`)
	e.run([]scenario{
		{name: "a key follows its group until it has its own", who: "alice", method: "GET", path: "/api/tokens/{alicekey}", status: 200,
			want: map[string]any{"log_content": nil}},
		{name: "an administrator turns a key's on, max_kb defaulted", who: "admin", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"log_content":{"enabled":true}}`, status: 200, want: map[string]any{"log_content.enabled": true, "log_content.max_kb": 64}},
		{name: "its owner may not change it", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"log_content":{"enabled":false}}`, status: 403},
		{name: "nor create a key with one", who: "alice", method: "POST", path: "/api/tokens",
			body: `{"name":"alice-2","log_content":{"enabled":false}}`, status: 403},
		{name: "null hands the key back to its group", who: "admin", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"log_content":null}`, status: 200, want: map[string]any{"log_content": nil}},
		{name: "max_kb of 0 is 400", who: "admin", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"log_content":{"enabled":true,"max_kb":0}}`, status: 400, want: map[string]any{"error.code": "invalid_field"}},
		{name: "max_kb past 1024 is 400", who: "admin", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"log_content":{"enabled":true,"max_kb":4096}}`, status: 400},
		{name: "an unknown member is 400", who: "admin", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"log_content":{"enabled":true,"bodies":true}}`, status: 400},
		{name: "enabled must be a boolean", who: "admin", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"log_content":{"enabled":"yes"}}`, status: 400},
		{name: "a group takes one", who: "admin", method: "PUT", path: "/api/groups/audited",
			body: `{"ratio":1,"log_content":{"enabled":true,"max_kb":16}}`, status: 200, want: map[string]any{"log_content.max_kb": 16}},
		{name: "a group body without one keeps it", who: "admin", method: "PUT", path: "/api/groups/audited",
			body: `{"ratio":2}`, status: 200, want: map[string]any{"ratio": 2, "log_content.enabled": true, "log_content.max_kb": 16}},
		{name: "a bad group setting changes nothing", who: "admin", method: "PUT", path: "/api/groups/audited",
			body: `{"ratio":3,"log_content":{"max_kb":-1}}`, status: 400},
		{name: "and the group is as it was", who: "admin", method: "GET", path: "/api/groups/audited", status: 200,
			want: map[string]any{"ratio": 2, "log_content.max_kb": 16}},
		{name: "null turns a group's off", who: "admin", method: "PUT", path: "/api/groups/audited",
			body: `{"ratio":2,"log_content":null}`, status: 200, want: map[string]any{"log_content": nil}},
	})
}

// The seed file takes log_content on groups and keys, checked with the
// API's rules, and config check reports a bad one.
func TestSeedSetsLogContentOnGroupsAndKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	name := seed.Tokens[0].User
	u, _ := e.d.Store.Users().GetByUsername(ctx, name)
	group := "default"
	if u != nil {
		group = u.Group
	}
	seed.Groups[group] = 1
	seed.GroupContent = map[string]map[string]any{group: {"enabled": true, "max_kb": 8}}
	seed.Tokens[0].LogContent = map[string]any{"enabled": false}
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	gs, _ := e.d.Store.Groups().List(ctx)
	var got *store.ContentLogging
	for _, g := range gs {
		if g.Name == group {
			got = g.LogContent
		}
	}
	if got == nil || *got != (store.ContentLogging{Enabled: true, MaxKB: 8}) {
		t.Fatalf("group %s: %+v", group, got)
	}
	u, _ = e.d.Store.Users().GetByUsername(ctx, name)
	tok, _ := e.d.Store.Tokens().GetByName(ctx, u.ID, seed.Tokens[0].Name)
	if tok.LogContent == nil || *tok.LogContent != (store.ContentLogging{Enabled: false, MaxKB: 64}) {
		t.Fatalf("key: %+v", tok.LogContent)
	}
	seed.GroupContent[group] = map[string]any{"enabled": true, "max_kb": 0}
	seed.Tokens[0].LogContent = map[string]any{"enabled": true, "size": 1}
	problems := CheckSeed(ctx, seed, config.Lines{}, nil)
	var group0, key0 bool
	for _, p := range problems {
		group0 = group0 || strings.Contains(p, "group "+group+": log_content.max_kb must be")
		key0 = key0 || strings.Contains(p, "log_content has unknown field size")
	}
	if !group0 || !key0 {
		t.Errorf("config check found %q", problems)
	}
}
