package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type batchRepo struct{ s *Store }

// Batches returns the batches and their line outcomes.
func (s *Store) Batches() store.BatchRepo { return batchRepo{s} }

var _ store.BatchRepo = batchRepo{}

const jobColumns = `public_id, kind, user_id, token_id, grp, endpoint, input_file_id, completion_window, metadata,
status, run_mode, channel_id, upstream, errs, output_file_id, error_file_id, total_lines, completed_lines,
failed_lines, holds, billed, charged, lease_owner, lease_until, next_poll_at, created_at, in_progress_at, finalizing_at,
completed_at, failed_at, expired_at, cancelling_at, cancelled_at, expires_at`

func batchArgs(b *store.Batch) []any {
	return []any{b.PublicID, b.Kind, b.UserID, b.TokenID, b.Group, b.Endpoint, b.InputFileID, b.CompletionWindow,
		nullJSON(b.Metadata), b.Status, b.Mode, b.ChannelID, nullJSON(b.Upstream), nullJSON(b.Errors), b.OutputFileID,
		b.ErrorFileID, b.Total, b.Completed, b.Failed, nullJSON(b.Holds), b.Billed, b.Charged, b.LeaseOwner, b.LeaseUntil,
		b.NextPollAt, b.CreatedAt, b.InProgressAt, b.FinalizingAt, b.CompletedAt, b.FailedAt, b.ExpiredAt,
		b.CancellingAt, b.CancelledAt, b.ExpiresAt}
}

func (r batchRepo) InsertBatch(ctx context.Context, b *store.Batch) error {
	q := "INSERT INTO batches (" + jobColumns + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", 34), ", ") + ")"
	id, err := r.s.insert(ctx, r.s.db, q, batchArgs(b)...)
	if err != nil {
		return wrap(err, "insert batch")
	}
	b.ID = id
	return nil
}

func scanBatch(row interface{ Scan(...any) error }) (*store.Batch, error) {
	var b store.Batch
	var meta, up, errs, holds sql.NullString
	err := row.Scan(&b.ID, &b.PublicID, &b.Kind, &b.UserID, &b.TokenID, &b.Group, &b.Endpoint, &b.InputFileID,
		&b.CompletionWindow, &meta, &b.Status, &b.Mode, &b.ChannelID, &up, &errs, &b.OutputFileID, &b.ErrorFileID,
		&b.Total, &b.Completed, &b.Failed, &holds, &b.Billed, &b.Charged, &b.LeaseOwner, &b.LeaseUntil, &b.NextPollAt,
		&b.CreatedAt, &b.InProgressAt, &b.FinalizingAt, &b.CompletedAt, &b.FailedAt, &b.ExpiredAt, &b.CancellingAt,
		&b.CancelledAt, &b.ExpiresAt)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct {
		dst *json.RawMessage
		src sql.NullString
	}{{&b.Metadata, meta}, {&b.Upstream, up}, {&b.Errors, errs}, {&b.Holds, holds}} {
		if p.src.Valid {
			*p.dst = json.RawMessage(p.src.String)
		}
	}
	return &b, nil
}

func (r batchRepo) query(ctx context.Context, where string, args ...any) ([]*store.Batch, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT id, "+jobColumns+" FROM batches "+where), args...)
	if err != nil {
		return nil, wrap(err, "query batches")
	}
	defer rows.Close()
	var out []*store.Batch
	for rows.Next() {
		b, err := scanBatch(rows)
		if err != nil {
			return nil, wrap(err, "scan batch")
		}
		out = append(out, b)
	}
	return out, wrap(rows.Err(), "query batches")
}

func (r batchRepo) GetBatch(ctx context.Context, publicID string) (*store.Batch, error) {
	bs, err := r.query(ctx, "WHERE public_id = ?", publicID)
	if err != nil {
		return nil, err
	}
	if len(bs) == 0 {
		return nil, notFound("batch")
	}
	return bs[0], nil
}

func (r batchRepo) ListBatches(ctx context.Context, userID int64, kind, after string, limit int) ([]*store.Batch, error) {
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	where, args := "WHERE user_id = ? AND kind = ?", []any{userID, kind}
	if after != "" {
		where += " AND id < (SELECT a.id FROM (SELECT id FROM batches WHERE public_id = ?) a)"
		args = append(args, after)
	}
	return r.query(ctx, where+" ORDER BY id DESC LIMIT ?", append(args, limit)...)
}

func (r batchRepo) SaveBatch(ctx context.Context, b *store.Batch) (bool, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(`UPDATE batches SET run_mode = ?, channel_id = ?, upstream = ?, errs = ?,
output_file_id = ?, error_file_id = ?, total_lines = ?, completed_lines = ?, failed_lines = ?, holds = ?, next_poll_at = ?
WHERE id = ? AND status = ?`), b.Mode, b.ChannelID, nullJSON(b.Upstream), nullJSON(b.Errors), b.OutputFileID,
		b.ErrorFileID, b.Total, b.Completed, b.Failed, nullJSON(b.Holds), b.NextPollAt, b.ID, b.Status)
	return affected(res, err, "save batch")
}

// statusTimes is the time column each status stamps.
var statusTimes = map[string]string{
	store.BatchInProgress: "in_progress_at", store.BatchFinalizing: "finalizing_at",
	store.BatchCompleted: "completed_at", store.BatchFailed: "failed_at", store.BatchExpired: "expired_at",
	store.BatchCancelling: "cancelling_at", store.BatchCancelled: "cancelled_at",
}

func (r batchRepo) MoveBatch(ctx context.Context, id int64, from []string, to string, at int64) (bool, error) {
	if len(from) == 0 {
		return false, nil
	}
	set, args := "status = ?", []any{to}
	if col, ok := statusTimes[to]; ok {
		set, args = set+", "+col+" = ?", append(args, at)
	}
	args = append(args, id)
	for _, f := range from {
		args = append(args, f)
	}
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("UPDATE batches SET "+set+" WHERE id = ? AND status IN ("+
		strings.TrimSuffix(strings.Repeat("?, ", len(from)), ", ")+")"), args...)
	return affected(res, err, "move batch")
}

func (r batchRepo) MarkBilled(ctx context.Context, id, charged int64) (bool, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("UPDATE batches SET billed = ?, charged = ? WHERE id = ? AND billed = ?"), true, charged, id, false)
	return affected(res, err, "mark batch billed")
}

func (r batchRepo) Active(ctx context.Context, now int64, limit int) ([]*store.Batch, error) {
	return r.query(ctx, "WHERE billed = ? AND lease_until < ? AND next_poll_at <= ? ORDER BY id LIMIT ?", false, now, now, limit)
}

func (r batchRepo) LeaseBatch(ctx context.Context, id int64, owner string, now, until int64) (bool, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("UPDATE batches SET lease_owner = ?, lease_until = ? WHERE id = ? AND (lease_owner = ? OR lease_until < ?)"),
		owner, until, id, owner, now)
	return affected(res, err, "lease batch")
}

func (r batchRepo) PutLine(ctx context.Context, l *store.BatchLine) (bool, error) {
	cols := "batch_id, line_no, custom_id, model, ok, status, body, input_tokens, output_tokens, quota, cost"
	vals := "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	q := "INSERT INTO batch_lines (" + cols + ") " + vals + " ON CONFLICT (batch_id, line_no) DO NOTHING"
	if r.s.dialect == MySQL {
		q = "INSERT IGNORE INTO batch_lines (" + cols + ") " + vals
	}
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(q), l.BatchID, l.Line, l.CustomID, l.Model, l.OK, l.Status, l.Body,
		l.InputTokens, l.OutputTokens, l.Quota, nullText(l.Cost))
	return affected(res, err, "batch line")
}

func (r batchRepo) Lines(ctx context.Context, batchID int64, afterLine, limit int) ([]*store.BatchLine, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(`SELECT batch_id, line_no, custom_id, model, ok, status, body,
input_tokens, output_tokens, quota, cost FROM batch_lines WHERE batch_id = ? AND line_no > ? ORDER BY line_no LIMIT ?`), batchID, afterLine, limit)
	if err != nil {
		return nil, wrap(err, "batch lines")
	}
	defer rows.Close()
	var out []*store.BatchLine
	for rows.Next() {
		var l store.BatchLine
		var cost sql.NullString
		if err := rows.Scan(&l.BatchID, &l.Line, &l.CustomID, &l.Model, &l.OK, &l.Status, &l.Body, &l.InputTokens,
			&l.OutputTokens, &l.Quota, &cost); err != nil {
			return nil, wrap(err, "scan batch line")
		}
		l.Cost = cost.String
		out = append(out, &l)
	}
	return out, wrap(rows.Err(), "batch lines")
}

// nullText stores an empty string as NULL.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// affected reports whether an update changed a row.
func affected(res sql.Result, err error, what string) (bool, error) {
	if err != nil {
		return false, wrap(err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, wrap(err, what)
	}
	return n > 0, nil
}
