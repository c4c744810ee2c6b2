package billing

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// errRebuilding refuses a move while the live balances are rebuilt from
// the ledger after Redis lost them: admitting against a missing or stale
// balance would spend blind.
var errRebuilding = &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "redis_unavailable",
	Message: "the gateway is rebuilding live balances; retry shortly"}

// redisUnavailable turns a Redis connectivity failure into the 503 every
// dialect renders, at the source: a plain error would reach the client as a
// 500 internal_error. Answers that are not failures (redis.Nil) and errors
// already meant for clients pass through.
func redisUnavailable(err error) error {
	if err == nil || errors.Is(err, redis.Nil) || isClientError(err) || errors.Is(err, errStaleEpoch) {
		return err
	}
	return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "redis_unavailable",
		Message: "the gateway cannot reach its balance store right now; retry shortly", Cause: err}
}

// storeUnavailable is redisUnavailable for the database: a missing record
// stays itself, a failed read becomes a 503 store_unavailable.
func storeUnavailable(err error) error {
	if err == nil || errors.Is(err, store.ErrNotFound) || isClientError(err) {
		return err
	}
	return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "store_unavailable",
		Message: "the gateway cannot read balances right now; retry shortly", Cause: err}
}

func isClientError(err error) bool {
	var ie *ir.Error
	return errors.As(err, &ie) || errors.Is(err, ErrInsufficientUser) || errors.Is(err, ErrInsufficientToken) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
