package relay

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
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
	st        *sqlstore.Store
	log       *slog.Logger
	lastPrune atomic.Int64
}

// NewResponseIndex returns the index over st; log receives write failures,
// which never fail the call that produced the response.
func NewResponseIndex(st *sqlstore.Store, log *slog.Logger) *SQLResponseIndex {
	if log == nil {
		log = slog.Default()
	}
	return &SQLResponseIndex{st: st, log: log}
}

// Remember records a response id; a repeated id takes the latest owner.
func (x *SQLResponseIndex) Remember(ctx context.Context, id string, channelID, userID int64) {
	q := "INSERT INTO response_index (response_id, channel_id, user_id, created_at) VALUES (?, ?, ?, ?) "
	if x.st.SQLDialect() == sqlstore.MySQL {
		q += "ON DUPLICATE KEY UPDATE channel_id = VALUES(channel_id), user_id = VALUES(user_id), created_at = VALUES(created_at)"
	} else {
		q += "ON CONFLICT (response_id) DO UPDATE SET channel_id = excluded.channel_id, user_id = excluded.user_id, created_at = excluded.created_at"
	}
	now := time.Now()
	if _, err := x.st.DB().ExecContext(ctx, x.st.Rebind(q), id, channelID, userID, now.UnixMilli()); err != nil {
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
	cutoff := now.Add(-responseRetention).UnixMilli()
	if _, err := x.st.DB().ExecContext(ctx, x.st.Rebind("DELETE FROM response_index WHERE created_at < ?"), cutoff); err != nil {
		x.log.Warn("could not prune the response index", "err", err)
	}
}

// Lookup finds the channel and owner of a response id that has not expired.
func (x *SQLResponseIndex) Lookup(ctx context.Context, id string) (int64, int64, bool) {
	var channelID, userID, created int64
	err := x.st.DB().QueryRowContext(ctx, x.st.Rebind("SELECT channel_id, user_id, created_at FROM response_index WHERE response_id = ?"), id).
		Scan(&channelID, &userID, &created)
	if err != nil || time.Since(time.UnixMilli(created)) > responseRetention {
		return 0, 0, false
	}
	return channelID, userID, true
}
