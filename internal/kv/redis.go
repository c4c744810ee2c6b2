// Package kv is the shared Redis of several nodes: opening it from
// TURNPIKE_REDIS and the change announcements between nodes. The state kept
// in it belongs to the packages that own it (billing's balances and
// journal, ratelimit's counters, routing's pins, auth's sign-in throttle);
// everything else reaches Redis through the Client this package opens.
package kv

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
)

// Client is a connection to one Redis server, Sentinel group or cluster.
type Client = redis.UniversalClient

// Open makes the shared Redis client from TURNPIKE_REDIS:
//
//	redis://[user:pass@]host:port/db            one server
//	rediss://[user:pass@]host:port/db           one server over TLS
//	redis+sentinel://[user:pass@]s1:26379/db?master_name=mymaster&addr=s2:26379&addr=s3:26379
//	                                            Sentinel (rediss+sentinel for TLS); the
//	                                            credentials serve the sentinels and the master
//	redis+cluster://[user:pass@]n1:6379?addr=n2:6379&addr=n3:6379
//	                                            Redis Cluster (rediss+cluster for TLS)
//
// Other query parameters are go-redis options in snake case (dial_timeout=3s,
// pool_size=50, …).
func Open(raw string) (Client, string, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, "", fmt.Errorf("redis address %q: want redis://, rediss://, redis+sentinel:// or redis+cluster://", redact(raw))
	}
	base, mode, _ := strings.Cut(strings.ToLower(scheme), "+")
	if base != "redis" && base != "rediss" {
		return nil, "", fmt.Errorf("redis address %q: unknown scheme %q", redact(raw), scheme)
	}
	plain := base + "://" + rest
	switch mode {
	case "":
		o, err := redis.ParseURL(plain)
		if err != nil {
			return nil, "", fmt.Errorf("redis address %q: %w", redact(raw), err)
		}
		failFast(&o.DialerRetries, &o.MaxRetries, &o.DialTimeout)
		return redis.NewClient(o), o.Addr, nil
	case "sentinel":
		o, err := redis.ParseFailoverURL(plain)
		if err != nil {
			return nil, "", fmt.Errorf("redis address %q: %w", redact(raw), err)
		}
		if o.MasterName == "" {
			return nil, "", fmt.Errorf("redis address %q: a Sentinel address needs ?master_name=", redact(raw))
		}
		o.Username, o.Password = o.SentinelUsername, o.SentinelPassword
		failFast(&o.DialerRetries, &o.MaxRetries, &o.DialTimeout)
		return redis.NewFailoverClient(o), "sentinel " + strings.Join(o.SentinelAddrs, ",") + " master " + o.MasterName, nil
	case "cluster":
		o, err := redis.ParseClusterURL(plain)
		if err != nil {
			return nil, "", fmt.Errorf("redis address %q: %w", redact(raw), err)
		}
		failFast(&o.DialerRetries, &o.MaxRetries, &o.DialTimeout)
		return redis.NewClusterClient(o), "cluster " + strings.Join(o.Addrs, ","), nil
	}
	return nil, "", fmt.Errorf("redis address %q: unknown scheme %q", redact(raw), scheme)
}

// failFast shortens the go-redis defaults the address did not set. Five
// dial attempts 100 ms apart and a 5 s dial timeout made every call wait
// seconds for its 503 while Redis was down. And go-redis retries a command
// whose answer was lost (a timeout, a reset): a balance script that ran
// but whose reply was lost would run again and move the balance twice, so
// commands are not retried; billing treats a lost answer as an unknown
// outcome and rebuilds the balances from the ledger. Reconnecting is
// go-redis's own probe (once a second once the pool saw as many dial
// failures as it has connections).
func failFast(dialerRetries, maxRetries *int, dial *time.Duration) {
	if *dialerRetries == 0 {
		*dialerRetries = 1
	}
	if *maxRetries == 0 {
		*maxRetries = -1
	}
	if *dial == 0 {
		*dial = time.Second
	}
}

// redact hides a password in a Redis address for error messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Ping checks that the shared Redis at where answers.
func Ping(ctx context.Context, rdb Client, where string) error {
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis does not answer at %s: %w", where, err)
	}
	return nil
}

// SilenceLibraryLog stops the Redis library from printing its own
// connection failures: a command that reports them as problems (config
// check) would otherwise say each one twice, once in the library's words.
func SilenceLibraryLog() { redis.SetLogger(&logging.VoidLogger{}) }
