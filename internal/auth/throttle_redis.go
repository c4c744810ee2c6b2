package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCounter is a Counter shared by every node using the same Redis.
type RedisCounter struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisCounter counts under keys starting with "turnpike:".
func NewRedisCounter(rdb redis.UniversalClient) *RedisCounter {
	return &RedisCounter{rdb: rdb, prefix: "turnpike:"}
}

var _ Counter = (*RedisCounter)(nil)

// incrScript increments and starts the window on the first attempt in one
// step, so a crash between the two cannot leave a counter that never ends,
// and answers the count with the window's rest.
var incrScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`)

// decrScript takes one back without going below zero or creating a key.
var decrScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0`)

// Incr implements Counter.
func (c *RedisCounter) Incr(ctx context.Context, key string, window time.Duration) (int64, time.Duration, error) {
	v, err := incrScript.Run(ctx, c.rdb, []string{c.prefix + key}, window.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(v) != 2 {
		return 0, 0, fmt.Errorf("throttle counter: unexpected answer %v", v)
	}
	return v[0], time.Duration(v[1]) * time.Millisecond, nil
}

// Decr implements Counter.
func (c *RedisCounter) Decr(ctx context.Context, key string) error {
	return decrScript.Run(ctx, c.rdb, []string{c.prefix + key}).Err()
}

// Reset implements Counter.
func (c *RedisCounter) Reset(ctx context.Context, key string) error {
	return c.rdb.Del(ctx, c.prefix+key).Err()
}
