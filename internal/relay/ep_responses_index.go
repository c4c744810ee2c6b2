package relay

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// ResponseIndex remembers which channel created a stored response and for
// whom, so GET /v1/responses/{id} reaches that channel and only its owner.
type ResponseIndex interface {
	Remember(ctx context.Context, id string, channelID, userID int64)
	Lookup(ctx context.Context, id string) (channelID, userID int64, ok bool)
}

// responseRetention matches how long the OpenAI API keeps stored
// responses; older index rows point at nothing.
const responseRetention = 30 * 24 * time.Hour

// SQLResponseIndex is the ResponseIndex in the gateway's database.
type SQLResponseIndex struct {
	repo      store.ResponseRepo
	log       *slog.Logger
	lastPrune atomic.Int64
}

// NewResponseIndex returns the index over repo; log receives write
// failures, which never fail the call that produced the response.
func NewResponseIndex(repo store.ResponseRepo, log *slog.Logger) *SQLResponseIndex {
	if log == nil {
		log = slog.Default()
	}
	return &SQLResponseIndex{repo: repo, log: log}
}

// Remember records a response id; a repeated id takes the latest owner.
func (x *SQLResponseIndex) Remember(ctx context.Context, id string, channelID, userID int64) {
	now := time.Now()
	if err := x.repo.Remember(ctx, id, channelID, userID, now); err != nil {
		x.log.Warn("could not remember a response id", "err", err)
	}
	x.prune(ctx, now)
}

// prune drops expired rows at most once an hour per process.
func (x *SQLResponseIndex) prune(ctx context.Context, now time.Time) {
	last := x.lastPrune.Load()
	if now.UnixMilli()-last < time.Hour.Milliseconds() || !x.lastPrune.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	if err := x.repo.Prune(ctx, now.Add(-responseRetention)); err != nil {
		x.log.Warn("could not prune the response index", "err", err)
	}
}

// Lookup finds the channel and owner of a response id that has not expired.
func (x *SQLResponseIndex) Lookup(ctx context.Context, id string) (int64, int64, bool) {
	channelID, userID, at, err := x.repo.Lookup(ctx, id)
	if err != nil || time.Since(at) > responseRetention {
		return 0, 0, false
	}
	return channelID, userID, true
}
