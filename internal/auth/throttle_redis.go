package auth

import (
	"context"
	"errors"
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

// addScript increments and starts the window on the first failure in one
// step, so a crash between the two cannot leave a counter that never ends.
var addScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`)

// Peek implements Counter.
func (c *RedisCounter) Peek(ctx context.Context, key string) (int64, time.Duration, error) {
	pipe := c.rdb.Pipeline()
	get := pipe.Get(ctx, c.prefix+key)
	ttl := pipe.PTTL(ctx, c.prefix+key)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, err
	}
	n, err := get.Int64()
	if errors.Is(err, redis.Nil) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return n, max(ttl.Val(), 0), nil
}

// Add implements Counter.
func (c *RedisCounter) Add(ctx context.Context, key string, window time.Duration) error {
	return addScript.Run(ctx, c.rdb, []string{c.prefix + key}, window.Milliseconds()).Err()
}

// Reset implements Counter.
func (c *RedisCounter) Reset(ctx context.Context, key string) error {
	return c.rdb.Del(ctx, c.prefix+key).Err()
}
