package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Principal is the caller of a request.
type Principal struct {
	UserID   int64
	Username string
	Role     string
	Group    string
	// TokenID is zero for session and root-token callers.
	TokenID   int64
	TokenName string
	// Models is the key's allow-list; empty allows every model.
	Models []string
	// ResponseCache is the key's response cache setting (nil: its
	// models' own).
	ResponseCache *store.ResponseCache
	// LogContent is the key's content logging setting (nil: its group's).
	LogContent *store.ContentLogging
	// TeamID, TeamRole and OrgID are the user's team, its role in it and
	// the team's organisation (0 and empty: none); TeamModels and
	// OrgModels their allow-lists (empty: every model).
	TeamID     int64
	TeamRole   string
	OrgID      int64
	TeamModels []string
	OrgModels  []string
	// TeamPays is set when the team's billing is shared: its balance
	// pays the user's calls (CONTRACT §18).
	TeamPays bool
}

// Allows reports whether the key, its team and its organisation may all
// use model.
func (p *Principal) Allows(model string) bool { return p.ModelRefusedBy(model) == "" }

// AtLeast reports whether the principal's role is role or stronger.
func (p *Principal) AtLeast(role string) bool { return rank(p.Role) >= rank(role) }

func rank(role string) int {
	switch role {
	case store.RoleRoot:
		return 3
	case store.RoleAdmin:
		return 2
	case store.RoleUser:
		return 1
	}
	return 0
}

// Keys authenticates API keys with a short-lived cache in front of the store.
type Keys struct {
	st  store.Store
	ttl time.Duration
	now func() time.Time
	// known holds keys that exist (usable or not); unknown holds misses for
	// a much shorter time, so a key created on another node works almost
	// at once while repeats of one wrong key still spare the database.
	// Both are bounded: a flood of random keys evicts old misses instead
	// of growing memory.
	known   *lru.Cache[string, *cached]
	unknown *lru.Cache[string, *cached]
	// gen counts invalidations: a lookup that read the database before an
	// invalidation is not cached after it, so a change announced by
	// another node cannot be hidden by a read that raced with it.
	gen atomic.Uint64
	// demo accepts the demo's published key (AllowDemoKey).
	demo bool
}

type cached struct {
	p       *Principal
	err     *ir.Error
	expires *time.Time
	until   time.Time
}

const (
	knownKeysCached   = 16_384
	unknownKeysCached = 4_096
	// unknownKeyTTL bounds how long a key created elsewhere is refused here.
	unknownKeyTTL = 2 * time.Second
)

// NewKeys returns a key authenticator whose cache entries live for ttl, the
// longest a change made on another node can take to be seen here.
func NewKeys(st store.Store, ttl time.Duration) *Keys {
	known, _ := lru.New[string, *cached](knownKeysCached)
	unknown, _ := lru.New[string, *cached](unknownKeysCached)
	return &Keys{st: st, ttl: ttl, now: time.Now, known: known, unknown: unknown}
}

// Invalidate drops every cached key, after users or tokens changed.
func (k *Keys) Invalidate() {
	k.gen.Add(1)
	k.known.Purge()
	k.unknown.Purge()
}

var (
	errMissingKey = &ir.Error{Status: 401, Kind: ir.KindAuthentication, Code: "invalid_api_key", Message: "no API key was given; send it as a Bearer token"}
	errBadKey     = &ir.Error{Status: 401, Kind: ir.KindAuthentication, Code: "invalid_api_key", Message: "the API key is not valid"}
)

// Authenticate resolves a raw key into its principal.
func (k *Keys) Authenticate(ctx context.Context, key string) (*Principal, error) {
	if key == "" {
		return nil, errMissingKey
	}
	if key == DemoKey && !k.demo {
		return nil, errBadKey
	}
	h := HashKey(key)
	now := k.now()
	for _, cache := range []*lru.Cache[string, *cached]{k.known, k.unknown} {
		if c, ok := cache.Get(h); ok && now.Before(c.until) {
			return c.result(now)
		}
	}
	gen := k.gen.Load()
	c, err := k.loadAside(ctx, h, now)
	if err != nil {
		return nil, err
	}
	if k.gen.Load() != gen {
		return c.result(now) // invalidated meanwhile: maybe stale, do not keep
	}
	if c.err == errBadKey {
		c.until = now.Add(min(k.ttl, unknownKeyTTL))
		k.unknown.Add(h, c)
	} else {
		k.known.Add(h, c)
	}
	return c.result(now)
}

func (c *cached) result(now time.Time) (*Principal, error) {
	if c.err != nil {
		return nil, c.err
	}
	if c.expires != nil && !now.Before(*c.expires) {
		return nil, &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "token_expired", Message: "the API key has expired"}
	}
	return c.p, nil
}

// loadAside is load on a goroutine of its own, which the caller waits for.
// A miss reads the store, and SQLite's driver (C translated to Go, frames
// of kilobytes) would grow the calling handler's stack to 32 KB; a call that
// then streams keeps that stack for as long as it is open. A panic is
// raised again in the caller, where the server's recovery sees it.
func (k *Keys) loadAside(ctx context.Context, hash string, now time.Time) (*cached, error) {
	type loaded struct {
		c     *cached
		err   error
		panic any
	}
	out := make(chan loaded, 1)
	go func() {
		var r loaded
		defer func() {
			r.panic = recover()
			out <- r
		}()
		r.c, r.err = k.load(ctx, hash, now)
	}()
	r := <-out
	if r.panic != nil {
		panic(r.panic)
	}
	return r.c, r.err
}

func (k *Keys) load(ctx context.Context, hash string, now time.Time) (*cached, error) {
	c := &cached{until: now.Add(k.ttl)}
	t, err := k.st.Tokens().GetByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		c.err = errBadKey
		return c, nil
	}
	if err != nil {
		return nil, storeDown(err)
	}
	if t.KeyHash != hash {
		// The key was rotated: its old secret works only in the grace, and
		// the cache entry must not outlive the grace.
		if t.PrevUntil == nil || !now.Before(*t.PrevUntil) {
			c.err = errBadKey
			return c, nil
		}
		c.until = minTime(c.until, *t.PrevUntil)
	}
	return k.fromToken(ctx, c, t)
}

func storeDown(err error) *ir.Error {
	return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "store_unavailable", Message: "the gateway cannot check keys right now", Cause: err}
}

// ForToken is the principal of the key with id, checked as Authenticate
// checks a key: work that runs later as a key (a batch) has only its id,
// since the gateway never keeps a key's raw value.
func (k *Keys) ForToken(ctx context.Context, id int64) (*Principal, error) {
	now := k.now()
	t, err := k.st.Tokens().Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errBadKey
	}
	if err != nil {
		return nil, storeDown(err)
	}
	c, err := k.fromToken(ctx, &cached{until: now}, t)
	if err != nil {
		return nil, err
	}
	return c.result(now)
}

// fromToken completes c with the principal of token t and its user.
func (k *Keys) fromToken(ctx context.Context, c *cached, t *store.Token) (*cached, error) {
	u, err := k.st.Users().Get(ctx, t.UserID)
	if errors.Is(err, store.ErrNotFound) {
		c.err = errBadKey
		return c, nil
	}
	if err != nil {
		return nil, storeDown(err)
	}
	switch {
	case t.Status != store.StatusEnabled:
		c.err = &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "token_disabled", Message: "the API key is disabled"}
	case u.Status != store.StatusEnabled:
		c.err = &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "user_disabled", Message: "the account of this API key is disabled"}
	}
	c.expires = t.ExpiresAt
	c.p = &Principal{UserID: u.ID, Username: u.Username, Role: u.Role, Group: u.Group, TokenID: t.ID, TokenName: t.Name, Models: t.Models,
		ResponseCache: t.ResponseCache, LogContent: t.LogContent}
	if err := withTeam(ctx, k.st, c.p, u); err != nil {
		return nil, storeDown(err)
	}
	return c, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// BearerToken extracts the token of an "Authorization: Bearer" header.
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Equal compares secrets in constant time.
func Equal(a, b string) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
