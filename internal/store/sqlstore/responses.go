package sqlstore

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type responseRepo struct{ s *Store }

// Responses returns the index of stored responses.
func (s *Store) Responses() store.ResponseRepo { return responseRepo{s} }

func (r responseRepo) Remember(ctx context.Context, id string, channelID, userID int64, at time.Time) error {
	_, err := r.s.db.ExecContext(ctx, r.s.upsertSQL("response_index", "response_id", []string{"channel_id", "user_id", "created_at"}),
		id, channelID, userID, at.UnixMilli())
	return wrap(err, "remember response")
}

func (r responseRepo) Lookup(ctx context.Context, id string) (int64, int64, time.Time, error) {
	var channelID, userID, created int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT channel_id, user_id, created_at FROM response_index WHERE response_id = ?"), id).
		Scan(&channelID, &userID, &created)
	if err != nil {
		return 0, 0, time.Time{}, wrap(err, "look up response")
	}
	return channelID, userID, time.UnixMilli(created).UTC(), nil
}

func (r responseRepo) Prune(ctx context.Context, before time.Time) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM response_index WHERE created_at < ?"), before.UnixMilli())
	return wrap(err, "prune responses")
}
