package admin

import (
	"context"
	"strings"
	"testing"
)

func TestRotatingAKey(t *testing.T) {
	e := newEnv(t)
	_, aliceKey := e.createKey("alice", "alicekey", `{"name":"alice-1"}`)
	_, bobKey := e.createKey("bob", "bobkey", `{"name":"bob-1"}`)
	var rotated []string
	keepKey := func(t *testing.T, _ *env, r response) {
		k, _ := r.body["key"].(string)
		if !strings.HasPrefix(k, "sk-") || len(k) != 51 || k == aliceKey || k == bobKey {
			t.Fatalf("rotation answered key %q, want a new full key", k)
		}
		rotated = append(rotated, k)
	}
	e.run([]scenario{
		{name: "anonymous cannot rotate", method: "POST", path: "/api/tokens/{alicekey}/rotate", body: `{}`, status: 401},
		{name: "another user's key is 404 to a user", who: "bob", method: "POST", path: "/api/tokens/{alicekey}/rotate", body: `{}`, status: 404},
		{name: "a negative grace is 400", who: "alice", method: "POST", path: "/api/tokens/{alicekey}/rotate", body: `{"grace_seconds":-1}`, status: 400},
		{name: "a grace beyond 30 days is 400", who: "alice", method: "POST", path: "/api/tokens/{alicekey}/rotate", body: `{"grace_seconds":2592001}`, status: 400},
		{name: "an unknown field is 400", who: "alice", method: "POST", path: "/api/tokens/{alicekey}/rotate", body: `{"grace":10}`, status: 400},
		{name: "the owner rotates with a grace and gets the new key once", who: "alice", method: "POST", path: "/api/tokens/{alicekey}/rotate",
			body: `{"grace_seconds":600}`, status: 200, want: map[string]any{"id": "{alicekey}", "name": "alice-1"}, check: keepKey},
		{name: "an admin rotates a user's key without a body", who: "admin", method: "POST", path: "/api/tokens/{bobkey}/rotate", status: 200, check: keepKey},
		{name: "later reads show the new key masked", who: "alice", method: "GET", path: "/api/tokens/{alicekey}", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if k := r.body["key"].(string); !strings.HasSuffix(rotated[0], k[len(k)-4:]) || strings.Contains(r.raw, rotated[0]) {
					t.Fatalf("key shown as %q after rotation to %q", k, rotated[0])
				}
			}},
	})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		key  string
		ok   bool
	}{
		{"alice's new key", rotated[0], true},
		{"alice's old key in its grace", aliceKey, true},
		{"bob's new key", rotated[1], true},
		{"bob's old key, rotated without grace", bobKey, false},
	} {
		_, err := e.d.Keys.Authenticate(ctx, c.key)
		if (err == nil) != c.ok {
			t.Errorf("%s: authenticate err = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
