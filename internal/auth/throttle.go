package auth

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"
)

// Counter counts attempts per key in fixed windows. The memory one serves
// a single node; the Redis one makes every node see the same counts, so an
// attacker gains nothing by spreading guesses over nodes.
type Counter interface {
	// Incr counts one more attempt under key in one atomic step and
	// returns the new count and how long until its window ends; the first
	// attempt starts a window. However many callers race, each sees a
	// different count, so no more than the limit get through.
	Incr(ctx context.Context, key string, window time.Duration) (n int64, resetIn time.Duration, err error)
	// Decr takes one attempt back, never going below zero or starting a
	// window.
	Decr(ctx context.Context, key string) error
	// Reset forgets key.
	Reset(ctx context.Context, key string) error
}

// ThrottleLimits say how many attempts are allowed per window.
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

// LoginThrottle limits guesses of a secret (a password, a second-factor or
// recovery code, a redemption code) per account and per client address.
//
// It counts an attempt before the secret is checked, with an atomic
// increment, and refuses it when the count passed a limit: a check that
// only peeked first and counted after the (slow) bcrypt would let every
// request of a parallel burst through before any of them was counted.
type LoginThrottle struct {
	c      Counter
	limits ThrottleLimits
	scope  string
}

// NewLoginThrottle returns a sign-in throttle counting in c.
func NewLoginThrottle(c Counter, limits ThrottleLimits) *LoginThrottle {
	return &LoginThrottle{c: c, limits: limits, scope: "login"}
}

// Scoped is the same throttle counting under a scope of its own, for
// secrets whose wrong guesses must not hold sign-in up (redemption codes).
func (t *LoginThrottle) Scoped(scope string) *LoginThrottle {
	return &LoginThrottle{c: t.c, limits: t.limits, scope: scope}
}

// Attempt counts one attempt as account from r and reports how long the
// caller must wait when the account or the address is past its limit; a
// zero wait means the secret may be checked now. Every attempt counts,
// whatever its outcome; Succeeded takes a successful one back. A counter
// that cannot be reached is reported and the caller decides (sign-in goes
// on rather than lock everyone out).
func (t *LoginThrottle) Attempt(ctx context.Context, account string, r *http.Request) (time.Duration, error) {
	var wait time.Duration
	for _, k := range []struct {
		key   string
		limit int64
	}{{t.accountKey(account), t.limits.PerAccount}, {t.addressKey(r), t.limits.PerAddress}} {
		n, resetIn, err := t.c.Incr(ctx, k.key, t.limits.Window)
		if err != nil {
			return 0, err
		}
		if n > k.limit {
			wait = max(wait, resetIn, time.Second)
		}
	}
	return wait, nil
}

// Succeeded clears the account's count, so its owner is not held up by
// earlier typing mistakes, and takes this attempt back from the address.
// The rest of the address count stays: a valid account of the attacker's
// own must not reset its budget for guessing others.
func (t *LoginThrottle) Succeeded(ctx context.Context, account string, r *http.Request) error {
	if err := t.c.Reset(ctx, t.accountKey(account)); err != nil {
		return err
	}
	return t.c.Decr(ctx, t.addressKey(r))
}

func (t *LoginThrottle) accountKey(account string) string {
	return t.scope + ":user:" + strings.ToLower(account)
}

// addressKey uses the connection's address, not X-Forwarded-For, which any
// client can set.
func (t *LoginThrottle) addressKey(r *http.Request) string {
	return t.scope + ":addr:" + AddressBucket(r)
}

// AddressBucket is the part of r's connection address that one client
// controls: the IPv4 address, or the /64 of an IPv6 one, since a single
// host is routinely given a whole /64 and can rotate through it at will.
func AddressBucket(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i] // a zone names an interface, not a client
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
