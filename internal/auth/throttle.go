package auth

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"
)

// Counter counts failures per key in fixed windows. The memory one serves
// a single node; the Redis one makes every node see the same counts, so an
// attacker gains nothing by spreading guesses over nodes.
type Counter interface {
	// Peek returns the count under key and how long until it resets.
	Peek(ctx context.Context, key string) (n int64, resetIn time.Duration, err error)
	// Add counts one more failure; the first one starts a window.
	Add(ctx context.Context, key string, window time.Duration) error
	// Reset forgets key.
	Reset(ctx context.Context, key string) error
}

// ThrottleLimits say how many failed sign-ins are allowed per window.
type ThrottleLimits struct {
	Window     time.Duration
	PerAccount int64
	PerAddress int64
}

// DefaultThrottleLimits stop online password guessing (a few hundred
// guesses a day per account at most) while a person who mistypes a few
// times is never held up. The address limit is higher because several
// people may share one address.
var DefaultThrottleLimits = ThrottleLimits{Window: 15 * time.Minute, PerAccount: 10, PerAddress: 50}

// LoginThrottle limits failed sign-ins per account and per client address.
type LoginThrottle struct {
	c      Counter
	limits ThrottleLimits
}

// NewLoginThrottle returns a throttle counting in c.
func NewLoginThrottle(c Counter, limits ThrottleLimits) *LoginThrottle {
	return &LoginThrottle{c: c, limits: limits}
}

// Blocked reports whether a sign-in as username from r must be refused
// before any password check, and for how long. A counter that cannot be
// read does not lock everyone out: it is reported and the sign-in goes on.
func (t *LoginThrottle) Blocked(ctx context.Context, username string, r *http.Request) (time.Duration, error) {
	var wait time.Duration
	for _, k := range []struct {
		key   string
		limit int64
	}{{accountKey(username), t.limits.PerAccount}, {addressKey(r), t.limits.PerAddress}} {
		n, resetIn, err := t.c.Peek(ctx, k.key)
		if err != nil {
			return 0, err
		}
		if n >= k.limit {
			wait = max(wait, resetIn, time.Second)
		}
	}
	return wait, nil
}

// Failed records a wrong password (or any refused sign-in).
func (t *LoginThrottle) Failed(ctx context.Context, username string, r *http.Request) error {
	if err := t.c.Add(ctx, accountKey(username), t.limits.Window); err != nil {
		return err
	}
	return t.c.Add(ctx, addressKey(r), t.limits.Window)
}

// Succeeded clears the account's count, so its owner is not held up by
// earlier typing mistakes. The address count stays: a valid account of
// the attacker's own must not reset its budget for guessing others.
func (t *LoginThrottle) Succeeded(ctx context.Context, username string) error {
	return t.c.Reset(ctx, accountKey(username))
}

func accountKey(username string) string { return "login:user:" + strings.ToLower(username) }

// addressKey uses the connection's address, not X-Forwarded-For, which any
// client can set.
func addressKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "login:addr:" + host
}
