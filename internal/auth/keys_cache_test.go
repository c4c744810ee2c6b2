package auth

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

func keysOverSQLite(t *testing.T) (*Keys, store.Store) {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return NewKeys(st, time.Minute), st
}

// createUserWithKey stores a user and an unlimited key of theirs whose
// secret is key, straight in the store (as another node would).
func createUserWithKey(t *testing.T, st store.Store, key string) *store.User {
	t.Helper()
	ctx := context.Background()
	u := &store.User{Username: "u", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: HashKey(key), KeyMasked: MaskKey(key), Quota: -1, Models: []string{}, Status: store.StatusEnabled}
	if err := st.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestAnUnknownKeyIsForgottenSoonerThanAKnownOne(t *testing.T) {
	ctx := context.Background()
	k, st := keysOverSQLite(t)
	now := time.Now()
	k.now = func() time.Time { return now }
	const key = "sk-created-on-another-node"
	if _, err := k.Authenticate(ctx, key); err == nil {
		t.Fatal("a key that does not exist was accepted")
	}
	// Another node creates the key; this node's cache does not hear of it.
	createUserWithKey(t, st, key)
	now = now.Add(unknownKeyTTL)
	if _, err := k.Authenticate(ctx, key); err != nil {
		t.Fatalf("the new key is still refused after %v: %v", unknownKeyTTL, err)
	}
}

func TestTheKeyCacheStaysBoundedUnderAFloodOfWrongKeys(t *testing.T) {
	k, _ := keysOverSQLite(t)
	for i := range unknownKeysCached + 500 {
		k.Authenticate(context.Background(), fmt.Sprintf("sk-random-guess-%d", i))
	}
	if n := k.unknown.Len() + k.known.Len(); n > unknownKeysCached {
		t.Fatalf("%d keys cached, want at most %d", n, unknownKeysCached)
	}
}

// The demo's published key opens nothing on a gateway that is not the
// demo, even when a token with that key is in its database (CONTRACT §16).
func TestTheDemoKeyIsRefusedOutsideTheDemo(t *testing.T) {
	ctx := context.Background()
	k, st := keysOverSQLite(t)
	u := &store.User{Username: "demo", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	tok := &store.Token{UserID: u.ID, Name: "demo-key", KeyHash: HashKey(DemoKey), KeyMasked: MaskKey(DemoKey), Quota: -1, Models: []string{}, Status: store.StatusEnabled}
	if err := st.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authenticate(ctx, DemoKey); err == nil {
		t.Fatal("serve accepted the demo's published key")
	}
	demo := NewKeys(st, time.Minute)
	demo.AllowDemoKey()
	if _, err := demo.Authenticate(ctx, DemoKey); err != nil {
		t.Fatalf("the demo refused its own key: %v", err)
	}
}
