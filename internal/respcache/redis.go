package respcache

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTimeout bounds a cache round trip: a slow Redis costs a call this
// much at most before it is served by the upstream instead.
const redisTimeout = 100 * time.Millisecond

// Redis is the store every node shares; Redis's own expiry is the ttl.
type Redis struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedis keeps entries under prefix+"rc:" (prefix as the gateway's other
// Redis keys).
func NewRedis(rdb redis.UniversalClient, prefix string) *Redis {
	return &Redis{rdb: rdb, prefix: prefix + "rc:"}
}

// Get reads an entry; a missing one is a miss, not an error.
func (r *Redis) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	v, err := r.rdb.Get(ctx, r.prefix+string(k)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Put stores an entry for ttl.
func (r *Redis) Put(ctx context.Context, k Key, v []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	return r.rdb.Set(ctx, r.prefix+string(k), v, ttl).Err()
}
