package admin

import (
	"context"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
)

// createKey makes a key as who and remembers its id and full key.
func (e *env) createKey(who, name, body string) (int64, string) {
	e.t.Helper()
	r := e.do(who, "POST", "/api/tokens", body)
	if r.status != 200 {
		e.t.Fatalf("create key: %d %s", r.status, r.raw)
	}
	id := int64(r.body["id"].(float64))
	e.ids[name] = id
	return id, r.body["key"].(string)
}

func TestTokenScenarios(t *testing.T) {
	e := newEnv(t)
	_, aliceKey := e.createKey("alice", "alicekey", `{"name":"alice-1"}`)
	if !strings.HasPrefix(aliceKey, "sk-") || len(aliceKey) != 51 {
		t.Fatalf("created key %q is not a full key", aliceKey)
	}
	e.createKey("bob", "bobkey", `{"name":"bob-1","quota":300,"models":["gpt-4o-mini"],"expires_at":"2099-01-02T03:04:05Z"}`)
	e.run([]scenario{
		{name: "anonymous cannot list keys", method: "GET", path: "/api/tokens", status: 401},
		{name: "a user lists only its own keys", who: "alice", method: "GET", path: "/api/tokens", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				list := items(t, r)
				if len(list) != 1 || list[0]["name"] != "alice-1" || r.body["total"] != float64(1) {
					t.Fatalf("alice sees %s", r.raw)
				}
			}},
		{name: "a user cannot widen the list with user_id", who: "alice", method: "GET", path: "/api/tokens?user_id={bob}", status: 200,
			check: wantTotal(1)},
		{name: "an admin lists every key", who: "admin", method: "GET", path: "/api/tokens", status: 200, check: wantTotal(2)},
		{name: "an admin filters by user", who: "admin", method: "GET", path: "/api/tokens?user_id={bob}", status: 200, check: wantTotal(1)},
		{name: "a bad user_id filter is 400", who: "admin", method: "GET", path: "/api/tokens?user_id=x", status: 400},
		{name: "a limited key shows its quota and fields", who: "bob", method: "GET", path: "/api/tokens/{bobkey}", status: 200,
			want: map[string]any{"quota": 300, "used_quota": 0, "models": []string{"gpt-4o-mini"}, "expires_at": "2099-01-02T03:04:05Z",
				"status": "enabled", "user_id": "{bob}"}},
		{name: "an unlimited key shows -1", who: "alice", method: "GET", path: "/api/tokens/{alicekey}", status: 200,
			want: map[string]any{"quota": -1, "expires_at": nil}},
		{name: "later reads show the key masked", who: "alice", method: "GET", path: "/api/tokens/{alicekey}", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				k := r.body["key"].(string)
				if k == aliceKey || !strings.Contains(k, "...") {
					t.Fatalf("key shown as %q", k)
				}
			}},
		{name: "another user's key is 404 to a user", who: "alice", method: "GET", path: "/api/tokens/{bobkey}", status: 404},
		{name: "an admin reads anyone's key", who: "admin", method: "GET", path: "/api/tokens/{bobkey}", status: 200},
		{name: "a missing key is 404", who: "admin", method: "GET", path: "/api/tokens/424242", status: 404},
		{name: "a non-numeric key id is 400", who: "admin", method: "GET", path: "/api/tokens/1e3", status: 400},
		{name: "a user cannot choose the key", who: "alice", method: "POST", path: "/api/tokens", body: `{"name":"mine","key":"sk-chosen-by-alice"}`, status: 403},
		{name: "an admin cannot choose the key", who: "admin", method: "POST", path: "/api/tokens", body: `{"name":"chosen","key":"sk-chosen-by-admin","user_id":{bob}}`, status: 403},
		{name: "root may choose the key", who: "root", method: "POST", path: "/api/tokens", body: `{"name":"migrated","key":"sk-migrated-key-1","user_id":{bob}}`, status: 200,
			want: map[string]any{"key": "sk-migrated-key-1", "user_id": "{bob}"}},
		{name: "a user cannot create keys for others", who: "alice", method: "POST", path: "/api/tokens", body: `{"name":"x","user_id":{bob}}`, status: 403},
		{name: "a key for a missing user is 404", who: "admin", method: "POST", path: "/api/tokens", body: `{"name":"x","user_id":999999}`, status: 404},
		{name: "the root token makes keys for the root user", who: "root", method: "POST", path: "/api/tokens", body: `{"name":"root-key"}`, status: 200,
			want: map[string]any{"user_id": "{root}"}},
		{name: "a duplicate name for the same user is 409", who: "alice", method: "POST", path: "/api/tokens", body: `{"name":"alice-1"}`, status: 409},
		{name: "a key without a name is 400", who: "alice", method: "POST", path: "/api/tokens", body: `{}`, status: 400},
		{name: "a quota below -1 is 400", who: "alice", method: "POST", path: "/api/tokens", body: `{"name":"x","quota":-2}`, status: 400},
		{name: "a malformed expiry is 400", who: "alice", method: "POST", path: "/api/tokens", body: `{"name":"x","expires_at":"tomorrow"}`, status: 400},
		{name: "models must be strings", who: "alice", method: "POST", path: "/api/tokens", body: `{"name":"x","models":[1]}`, status: 400,
			want: map[string]any{"error.message": "models must be a list of strings"}},
		{name: "a user renames and restricts its key", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"name":"alice-renamed","models":["a","b"],"expires_at":"2098-05-06T00:00:00Z","status":"disabled"}`, status: 200,
			want: map[string]any{"name": "alice-renamed", "models": []string{"a", "b"}, "expires_at": "2098-05-06T00:00:00Z", "status": "disabled"}},
		{name: "null expiry clears it", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}", body: `{"expires_at":null}`, status: 200,
			want: map[string]any{"expires_at": nil, "name": "alice-renamed"}},
		{name: "a user cannot patch another's key", who: "alice", method: "PATCH", path: "/api/tokens/{bobkey}", body: `{"name":"mine"}`, status: 404},
		{name: "the key itself cannot be patched", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}", body: `{"key":"sk-new-key-123"}`, status: 400},
		{name: "a limited quota is adjusted", who: "bob", method: "PATCH", path: "/api/tokens/{bobkey}", body: `{"quota":1000}`, status: 200,
			want: map[string]any{"quota": 1000}},
		{name: "a limited key becomes unlimited", who: "bob", method: "PATCH", path: "/api/tokens/{bobkey}", body: `{"quota":-1}`, status: 200,
			want: map[string]any{"quota": -1}},
		{name: "an unlimited key becomes limited", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}", body: `{"quota":70}`, status: 200,
			want: map[string]any{"quota": 70}},
		{name: "the new limit holds after a reload", who: "alice", method: "GET", path: "/api/tokens/{alicekey}", status: 200,
			want: map[string]any{"quota": 70}},
		{name: "a user cannot delete another's key", who: "alice", method: "DELETE", path: "/api/tokens/{bobkey}", status: 404},
		{name: "a user deletes its own key", who: "bob", method: "DELETE", path: "/api/tokens/{bobkey}", status: 200},
		{name: "the deleted key is gone", who: "admin", method: "GET", path: "/api/tokens/{bobkey}", status: 404},
	})
	e.assertNeverShownAfterCreation(aliceKey)
}

// assertNeverShownAfterCreation checks that a key appeared only in the one
// answer that created it.
func (e *env) assertNeverShownAfterCreation(key string) {
	e.t.Helper()
	seen := 0
	for _, b := range e.bodies {
		if strings.Contains(b, key) {
			seen++
		}
	}
	if seen != 1 {
		e.t.Fatalf("key appeared in %d responses, want only the creating one", seen)
	}
}

func TestTokenLimitIsEnforcedByBilling(t *testing.T) {
	e := newEnv(t)
	id, key := e.createKey("alice", "k", `{"name":"limited","quota":100}`)
	ctx := context.Background()
	p, err := e.d.Keys.Authenticate(ctx, key)
	if err != nil || p.TokenID != id {
		t.Fatalf("new key does not authenticate: %v", err)
	}
	acct := billing.Account{UserID: e.ids["alice"], TokenID: id}
	if _, err := e.d.Billing.Reserve(ctx, acct, "r1", 150); err == nil {
		t.Fatal("a reservation above the key's quota went through")
	}
	if r := e.do("alice", "PATCH", "/api/tokens/{k}", `{"quota":-1}`); r.status != 200 {
		t.Fatalf("unlimit: %d %s", r.status, r.raw)
	}
	h, err := e.d.Billing.Reserve(ctx, acct, "r2", 150)
	if err != nil {
		t.Fatalf("unlimited key still limited: %v", err)
	}
	h.Refund(ctx, nil)
}

func TestDisablingAKeyTakesEffectAtOnce(t *testing.T) {
	e := newEnv(t)
	_, key := e.createKey("alice", "k", `{"name":"k"}`)
	ctx := context.Background()
	if _, err := e.d.Keys.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	if r := e.do("alice", "PATCH", "/api/tokens/{k}", `{"status":"disabled"}`); r.status != 200 {
		t.Fatalf("disable: %d", r.status)
	}
	if _, err := e.d.Keys.Authenticate(ctx, key); err == nil {
		t.Fatal("a disabled key still authenticates from the cache")
	}
}

// TestAdminsManageOnlyKeysOfUsersBelowThem applies the users rule to keys:
// an administrator manages its own keys and those of plain users, never
// root's or another administrator's, and cannot even see them.
func TestAdminsManageOnlyKeysOfUsersBelowThem(t *testing.T) {
	e := newEnv(t)
	remember := func(name string) func(t *testing.T, e *env, r response) {
		return func(t *testing.T, e *env, r response) { e.ids[name] = int64(r.body["id"].(float64)) }
	}
	e.run([]scenario{
		{name: "root makes a key of its own", who: "root", method: "POST", path: "/api/tokens", body: `{"name":"root-key"}`, status: 200, check: remember("rootkey")},
		{name: "admin2 makes a key of its own", who: "admin2", method: "POST", path: "/api/tokens", body: `{"name":"admin2-key"}`, status: 200, check: remember("admin2key")},
		{name: "an admin cannot create a key owned by root", who: "admin", method: "POST", path: "/api/tokens", body: `{"name":"planted","user_id":{root}}`, status: 403},
		{name: "an admin cannot plant a chosen key on root", who: "admin", method: "POST", path: "/api/tokens", body: `{"name":"planted","key":"sk-planted-on-root","user_id":{root}}`, status: 403},
		{name: "an admin cannot create a key for another admin", who: "admin", method: "POST", path: "/api/tokens", body: `{"name":"planted","user_id":{admin2}}`, status: 403},
		{name: "an admin still creates keys for users", who: "admin", method: "POST", path: "/api/tokens", body: `{"name":"for-bob","user_id":{bob}}`, status: 200},
		{name: "an admin's listing leaves out root's and other admins' keys", who: "admin", method: "GET", path: "/api/tokens", status: 200, check: wantTotal(1)},
		{name: "an admin asking for root's keys gets none", who: "admin", method: "GET", path: "/api/tokens?user_id={root}", status: 200, check: wantTotal(0)},
		{name: "an admin cannot read root's key", who: "admin", method: "GET", path: "/api/tokens/{rootkey}", status: 404},
		{name: "an admin cannot disable root's key", who: "admin", method: "PATCH", path: "/api/tokens/{rootkey}", body: `{"status":"disabled"}`, status: 404},
		{name: "an admin cannot delete another admin's key", who: "admin", method: "DELETE", path: "/api/tokens/{admin2key}", status: 404},
		{name: "root sees every key", who: "root", method: "GET", path: "/api/tokens", status: 200, check: wantTotal(3)},
		{name: "root's key is still enabled", who: "root", method: "GET", path: "/api/tokens/{rootkey}", status: 200, want: map[string]any{"status": "enabled"}},
	})
}
