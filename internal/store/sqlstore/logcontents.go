package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// logContentsMigration adds content logging (CONTRACT §20): the kept
// request and answer of a call, by the ref its usage row names in
// other.content, and the log_content setting of groups and keys (NULL:
// none, so every call logs nothing, as before).
var logContentsMigration = Migration{Version: 162, Name: "usage log contents", SQL: `
CREATE TABLE usage_log_contents (
	ref {{string}} NOT NULL PRIMARY KEY,
	user_id {{bigint}} NOT NULL,
	request {{text}} NOT NULL,
	answer {{text}} NOT NULL,
	request_truncated {{bool}} NOT NULL,
	answer_truncated {{bool}} NOT NULL,
	created_at {{time}} NOT NULL
) {{options}};
CREATE INDEX usage_log_contents_created_idx ON usage_log_contents (created_at);
ALTER TABLE tokens ADD log_content {{text}} NULL;
ALTER TABLE user_groups ADD log_content {{text}} NULL;
`}

type logContentRepo struct{ s *Store }

// LogContents is the repository of kept call contents.
func (s *Store) LogContents() store.LogContentRepo { return logContentRepo{s} }

const logContentColumns = "ref, user_id, request, answer, request_truncated, answer_truncated, created_at"

// logContentCols is the number of columns in logContentColumns.
const logContentCols = 7

// Insert writes cs in one transaction, one bounded statement per chunk; a
// ref already stored is skipped, so a batch the writer retries after a
// lost commit answer writes nothing twice.
func (r logContentRepo) Insert(ctx context.Context, cs []store.LogContent) error {
	if len(cs) == 0 {
		return nil
	}
	head := "INSERT INTO usage_log_contents (" + logContentColumns + ") VALUES "
	tail := " ON CONFLICT (ref) DO NOTHING"
	if r.s.dialect == MySQL {
		head, tail = "INSERT IGNORE INTO usage_log_contents ("+logContentColumns+") VALUES ", ""
	}
	const chunk = 50
	return wrap(r.s.withTx(ctx, func(tx *sql.Tx) error {
		for lo := 0; lo < len(cs); lo += chunk {
			part := cs[lo:min(lo+chunk, len(cs))]
			args := make([]any, 0, len(part)*logContentCols)
			for _, c := range part {
				args = append(args, c.Ref, c.UserID, c.Request, c.Answer, c.RequestTruncated, c.AnswerTruncated, orNow(c.CreatedAt))
			}
			if _, err := tx.ExecContext(ctx, r.s.Rebind(head+rowsSQL(logContentCols, len(part))+tail), args...); err != nil {
				return err
			}
		}
		return nil
	}), "insert log contents")
}

func scanLogContent(row interface{ Scan(...any) error }) (store.LogContent, error) {
	var c store.LogContent
	err := row.Scan(&c.Ref, &c.UserID, &c.Request, &c.Answer, &c.RequestTruncated, &c.AnswerTruncated, &c.CreatedAt)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, err
}

func (r logContentRepo) Get(ctx context.Context, ref string) (store.LogContent, error) {
	row := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+logContentColumns+" FROM usage_log_contents WHERE ref = ?"), ref)
	c, err := scanLogContent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFound("log content")
	}
	return c, wrap(err, "get log content")
}

// Each pages through w by (created_at, ref), so no page holds a cursor
// open while fn writes elsewhere.
func (r logContentRepo) Each(ctx context.Context, w store.Window, fn func(store.LogContent) error) error {
	const page = 500
	since, lastRef := dbTime(w.Since), ""
	q := r.s.Rebind("SELECT " + logContentColumns + " FROM usage_log_contents WHERE created_at < ? AND " +
		"(created_at > ? OR (created_at = ? AND ref > ?)) ORDER BY created_at, ref LIMIT ?")
	first := true
	for {
		after := since
		if first {
			// The window's start is included: step just before it.
			after, first = since.Add(-time.Microsecond), false
		}
		rows, err := r.s.db.QueryContext(ctx, q, dbTime(w.Until), after, after, lastRef, page)
		if err != nil {
			return wrap(err, "read log contents")
		}
		got, err := collect(rows, scanLogContent)
		if err != nil {
			return wrap(err, "read log contents")
		}
		for _, c := range got {
			if err := fn(c); err != nil {
				return err
			}
		}
		if len(got) < page {
			return nil
		}
		since, lastRef = dbTime(got[len(got)-1].CreatedAt), got[len(got)-1].Ref
	}
}

func (r logContentRepo) PruneRange(ctx context.Context, w store.Window, limit int) (int64, error) {
	q := "DELETE FROM usage_log_contents WHERE ref IN (SELECT ref FROM usage_log_contents WHERE created_at >= ? AND created_at < ? ORDER BY created_at LIMIT ?)"
	if r.s.dialect == MySQL {
		q = "DELETE FROM usage_log_contents WHERE created_at >= ? AND created_at < ? ORDER BY created_at LIMIT ?"
	}
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(q), dbTime(w.Since), dbTime(w.Until), limit)
	if err != nil {
		return 0, wrap(err, "prune log contents")
	}
	n, err := res.RowsAffected()
	return n, wrap(err, "prune log contents")
}
