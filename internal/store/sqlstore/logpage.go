package sqlstore

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Page reads one page newest first: by offset for shallow pages, after
// the cursor (id < BeforeID) for deep ones, each an index range read
// backwards (migration 161). The count stops at LogCountCap+1 matches.
func (r logRepo) Page(ctx context.Context, f store.LogFilter, p store.Page) (store.LogPage, error) {
	limit, offset := limitOffset(p)
	if f.BeforeID != 0 {
		offset = 0
	}
	where, args := logWhere(f)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(logSelect+where+" ORDER BY id DESC LIMIT ? OFFSET ?"), append(args, limit, offset)...)
	if err != nil {
		return store.LogPage{}, wrap(err, "list logs")
	}
	items, err := collect(rows, scanLog)
	if err != nil {
		return store.LogPage{}, wrap(err, "list logs")
	}
	out := store.LogPage{Items: items}
	if len(items) == limit {
		out.NextCursor = items[len(items)-1].ID
	}
	counted := f
	counted.BeforeID = 0
	out.Total, out.TotalExact, err = r.count(ctx, counted)
	return out, wrap(err, "count logs")
}

// count counts the matches up to LogCountCap; past it, the whole table's
// size is the planner's estimate on PostgreSQL (kept by ANALYZE and
// autovacuum), and a filter's count is given as the cap passed.
func (r logRepo) count(ctx context.Context, f store.LogFilter) (int, bool, error) {
	where, args := logWhere(f)
	n, err := r.s.count(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM usage_logs"+where+" LIMIT ?) c", append(args, store.LogCountCap+1)...)
	if err != nil || n <= store.LogCountCap {
		return n, err == nil, err
	}
	if where == "" && r.s.dialect == Postgres {
		var est float64
		err := r.s.db.QueryRowContext(ctx, "SELECT reltuples FROM pg_class WHERE oid = 'usage_logs'::regclass").Scan(&est)
		if err == nil && int(est) > n {
			return int(est), false, nil
		}
	}
	return n, false, nil
}

// Each reads the matches oldest first by (created_at, id), a page after
// the last row seen at a time, so no cursor stays open while fn writes to a
// slow client, and a window far into a large log starts by the created_at
// index instead of walking every older id.
func (r logRepo) Each(ctx context.Context, f store.LogFilter, fn func(store.UsageLog) error) error {
	f.BeforeID = 0
	var at time.Time
	var after int64
	first := true
	for {
		where, args := logWhere(f)
		if !first {
			cond := "(created_at > ? OR (created_at = ? AND id > ?))"
			args = append(args, dbTime(at), dbTime(at), after)
			if where == "" {
				where = " WHERE " + cond
			} else {
				where += " AND " + cond
			}
		}
		rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(logSelect+where+" ORDER BY created_at, id LIMIT ?"), append(args, booksPage)...)
		if err != nil {
			return wrap(err, "read logs")
		}
		page, err := collect(rows, scanLog)
		if err != nil {
			return wrap(err, "read logs")
		}
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
			at, after, first = l.CreatedAt, l.ID, false
		}
		if len(page) < booksPage {
			return nil
		}
	}
}

// PruneRange is Prune for one window up to an id, oldest ids first.
func (r logRepo) PruneRange(ctx context.Context, w store.Window, maxID int64, limit int) (int64, error) {
	q := "DELETE FROM usage_logs WHERE id IN (SELECT id FROM usage_logs WHERE created_at >= ? AND created_at < ? AND id <= ? ORDER BY id LIMIT ?)"
	if r.s.dialect == MySQL {
		q = "DELETE FROM usage_logs WHERE created_at >= ? AND created_at < ? AND id <= ? ORDER BY id LIMIT ?"
	}
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(q), dbTime(w.Since), dbTime(w.Until), maxID, limit)
	if err != nil {
		return 0, wrap(err, "prune logs")
	}
	n, err := res.RowsAffected()
	return n, wrap(err, "prune logs")
}

// Oldest reads the first entry of the created_at index.
func (r logRepo) Oldest(ctx context.Context) (time.Time, bool, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT created_at FROM usage_logs ORDER BY created_at LIMIT 1")
	if err != nil {
		return time.Time{}, false, wrap(err, "oldest log")
	}
	defer rows.Close()
	if !rows.Next() {
		return time.Time{}, false, wrap(rows.Err(), "oldest log")
	}
	var t time.Time
	err = rows.Scan(&t)
	return t.UTC(), err == nil, wrap(err, "oldest log")
}
