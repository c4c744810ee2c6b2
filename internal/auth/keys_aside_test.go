package auth

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// panickingStore's token read panics, as a driver bug would.
type panickingStore struct{ store.Store }

type panickingTokens struct{ store.TokenRepo }

func (panickingStore) Tokens() store.TokenRepo { return panickingTokens{} }

func (panickingTokens) GetByHash(context.Context, string) (*store.Token, error) {
	panic("driver bug")
}

// The store is read on a goroutine of its own (loadAside); a panic there
// must still reach the handler's caller, where the server's recovery
// answers 500, instead of ending the process.
func TestAPanicInTheKeyReadIsRaisedInTheCaller(t *testing.T) {
	k := NewKeys(panickingStore{}, time.Minute)
	defer func() {
		if v := recover(); v != "driver bug" {
			t.Errorf("recovered %v, want the store's panic", v)
		}
	}()
	k.Authenticate(context.Background(), "sk-any")
	t.Error("Authenticate returned instead of panicking")
}

func TestAKeyReadAsideStillCachesWhatItRead(t *testing.T) {
	ctx := context.Background()
	k, st := keysOverSQLite(t)
	const key = "sk-read-aside"
	u := createUserWithKey(t, st, key)
	p, err := k.Authenticate(ctx, key)
	if err != nil || p.UserID != u.ID {
		t.Fatalf("principal %+v, %v; want user %d", p, err, u.ID)
	}
	if _, ok := k.known.Get(HashKey(key)); !ok {
		t.Error("the key read aside was not cached")
	}
}
