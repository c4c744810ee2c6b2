package routing

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisPinTimeout bounds a pin lookup: a slow Redis costs a call this much
// at most before it is routed without its pin.
const redisPinTimeout = 100 * time.Millisecond

// RedisPins is the PinStore every node shares: one key per session
// ("pin:<user>:<hash>", so users' sessions never meet),
// "<channel id>:<key index>", expiring ttl after the last request (GETEX
// renews it in the same round trip that reads it).
type RedisPins struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisPins keeps pins under prefix+"pin:" (prefix as the gateway's
// other Redis keys, with its cluster hash tag).
func NewRedisPins(rdb redis.UniversalClient, prefix string) *RedisPins {
	return &RedisPins{rdb: rdb, prefix: prefix + "pin:"}
}

func (p *RedisPins) key(session Session) string {
	return p.prefix + strconv.FormatInt(session.User, 10) + ":" + strconv.FormatUint(session.Hash, 16)
}

// Get reads and renews the session's pin.
func (p *RedisPins) Get(ctx context.Context, session Session, ttl time.Duration) (Pin, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, redisPinTimeout)
	defer cancel()
	v, err := p.rdb.GetEx(ctx, p.key(session), ttl).Result()
	if errors.Is(err, redis.Nil) {
		return Pin{}, false, nil
	}
	if err != nil {
		return Pin{}, false, err
	}
	pin, ok := parsePin(v)
	return pin, ok, nil
}

// Set pins the session for ttl.
func (p *RedisPins) Set(ctx context.Context, session Session, pin Pin, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, redisPinTimeout)
	defer cancel()
	v := strconv.FormatInt(pin.ChannelID, 10) + ":" + strconv.Itoa(pin.KeyIndex)
	return p.rdb.Set(ctx, p.key(session), v, ttl).Err()
}

// parsePin reads "<channel id>:<key index>"; anything else is no pin.
func parsePin(v string) (Pin, bool) {
	ch, key, ok := strings.Cut(v, ":")
	if !ok {
		return Pin{}, false
	}
	id, err1 := strconv.ParseInt(ch, 10, 64)
	idx, err2 := strconv.Atoi(key)
	if err1 != nil || err2 != nil || idx < 0 {
		return Pin{}, false
	}
	return Pin{ChannelID: id, KeyIndex: idx}, true
}
