package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// maxTxAttempts bounds reruns of a transaction that lost a deadlock or timed
// out waiting for a lock; every transaction here is safe to rerun because
// nothing of a failed attempt survives its rollback.
const maxTxAttempts = 5

// withTx runs fn in a transaction, rerunning it when the database reports a
// deadlock, serialization failure or busy lock.
func (s *Store) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxTxAttempts; attempt++ {
		err = s.tryTx(ctx, fn)
		if err == nil || classify(err) != classRetry {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(time.Duration(attempt*attempt) * 5 * time.Millisecond):
		}
	}
	return err
}

func (s *Store) tryTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// insert runs an INSERT and returns the new row's id: through RETURNING on
// PostgreSQL, whose driver has no LastInsertId, and LastInsertId elsewhere.
func (s *Store) insert(ctx context.Context, q querier, query string, args ...any) (int64, error) {
	if s.dialect == Postgres {
		var id int64
		err := q.QueryRowContext(ctx, Rebind(Postgres, query+" RETURNING id"), args...).Scan(&id)
		return id, err
	}
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// execOne runs a rebound statement and reports store.ErrNotFound when it
// matched no row.
func (s *Store) execOne(ctx context.Context, q querier, what, query string, args ...any) error {
	res, err := q.ExecContext(ctx, s.Rebind(query), args...)
	if err != nil {
		return wrap(err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap(err, what)
	}
	if n == 0 {
		return notFound(what)
	}
	return nil
}

// count runs a COUNT(*) query.
func (s *Store) count(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.Rebind(query), args...).Scan(&n)
	return n, err
}

// now is the current time as stored: UTC, microsecond precision, which is
// the finest all three databases keep.
func now() time.Time { return dbTime(time.Now()) }

// dbTime brings t to the form the databases store, so a value written and
// read back compares equal.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// orNow returns t in stored form, or the current time when t is zero.
func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return dbTime(t)
}

// nullTime converts an optional time to a bind argument.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return dbTime(*t)
}

// timePtr converts a scanned nullable time.
func timePtr(nt sql.NullTime) *time.Time {
	if !nt.Valid {
		return nil
	}
	t := nt.Time.UTC()
	return &t
}

// maxPage is past the end of any listing these tables hold.
const maxPage = 1 << 31

// limitOffset normalises a page: page 1 and 20 rows by default, at most 1000.
func limitOffset(p store.Page) (limit, offset int) {
	page, size := p.Page, p.PageSize
	if page < 1 {
		page = 1
	}
	if size < 1 {
		size = 20
	}
	if size > 1000 {
		size = 1000
	}
	// A page past any real listing is empty; clamping it keeps the offset
	// from wrapping negative, which PostgreSQL rejects and SQLite reads as 0.
	page = min(page, maxPage)
	return size, (page - 1) * size
}

// jsonText encodes a value for a JSON text column.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode json column: %w", err)
	}
	return string(b), nil
}

// stringList encodes a list column; nil is stored as [] so readers always
// get a list.
func stringList(v []string) (string, error) {
	if v == nil {
		v = []string{}
	}
	return jsonText(v)
}

// rawText stores raw JSON, with empty as NULL.
func rawText(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}

// rawFrom reads a nullable raw JSON column.
func rawFrom(ns sql.NullString) json.RawMessage {
	if !ns.Valid || ns.String == "" {
		return nil
	}
	return json.RawMessage(ns.String)
}

// decodeList decodes a stored list, always returning a non-nil slice.
func decodeList(s string) ([]string, error) {
	out := []string{}
	if s == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("decode json column: %w", err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// defaultStatus fills an empty status with enabled.
func defaultStatus(s string) string {
	if s == "" {
		return store.StatusEnabled
	}
	return s
}
