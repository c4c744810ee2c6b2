package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type logRepo struct{ s *Store }

const logInsertColumns = "type, user_id, token_id, channel_id, model, prompt_tokens, completion_tokens, quota, latency_ms, request_id, other, created_at, team_id, org_id"

const logSelect = "SELECT id, " + logInsertColumns + " FROM usage_logs"

// logInsertCols is the number of columns in logInsertColumns.
const logInsertCols = 14

// logWriteColumns are the columns the billing writer writes: it adds its
// rows to the rollups in the same transaction, so it clears the mark a
// node without rollups leaves (rollupPendingMigration), and the one a node
// without the channel rollups leaves (channelRollupsMigration), and the
// one a node without the report rollups leaves (reportRollupsMigration).
const logWriteColumns = logInsertColumns + ", rollup_pending, channel_pending, report_pending"

// logRowsSQL is the VALUES list of n rows of logWriteColumns.
func logRowsSQL(n int) string {
	row := "(?" + strings.Repeat(", ?", logInsertCols-1) + ", NULL, NULL, NULL)"
	return row + strings.Repeat(", "+row, n-1)
}

// Insert writes the batch in one transaction with multi-row inserts; a zero
// CreatedAt is stamped with the current time. IDs are not reported back.
func (r logRepo) Insert(ctx context.Context, logs []store.UsageLog) error {
	return wrap(r.s.write(ctx, nil, logs), "insert logs")
}

// insertLogs writes logs within tx: on SQLite in one statement, elsewhere
// through the prepared chunk statements.
func insertLogs(ctx context.Context, tx *sql.Tx, b *batchStmts, logs []store.UsageLog, stamp time.Time) error {
	if len(logs) == 0 {
		return nil
	}
	if b.logBatch != nil {
		return execBatch(ctx, tx, b.logBatch, logRows{logs, stamp})
	}
	args := make([]any, 0, chunkSizes[0]*logInsertCols)
	return chunks(len(logs), func(lo, hi, k int) error {
		args = args[:0]
		for _, l := range logs[lo:hi] {
			created := stamp
			if !l.CreatedAt.IsZero() {
				created = dbTime(l.CreatedAt)
			}
			args = append(args, l.Type, l.UserID, l.TokenID, l.ChannelID, l.Model, l.PromptTokens, l.CompletionTokens,
				l.Quota, l.LatencyMS, l.RequestID, rawText(l.Other), created, l.TeamID, l.OrgID)
		}
		_, err := tx.StmtContext(ctx, b.logInsert[k]).ExecContext(ctx, args...)
		return err
	})
}

// logWhere turns a filter into a WHERE clause and its arguments.
func logWhere(f store.LogFilter) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		conds = append(conds, cond)
		args = append(args, arg)
	}
	if f.Type != "" {
		add("type = ?", f.Type)
	}
	if f.Model != "" {
		add("model = ?", f.Model)
	}
	if f.UserID != 0 {
		add("user_id = ?", f.UserID)
	}
	if f.TokenID != 0 {
		add("token_id = ?", f.TokenID)
	}
	if f.ChannelID != 0 {
		add("channel_id = ?", f.ChannelID)
	}
	if f.TeamID != 0 {
		add(teamCond("team_id"), f.TeamID)
	}
	if f.OrgID != 0 {
		add(teamCond("org_id"), f.OrgID)
	}
	if !f.Since.IsZero() {
		add("created_at >= ?", dbTime(f.Since))
	}
	if !f.Until.IsZero() {
		add("created_at < ?", dbTime(f.Until))
	}
	if f.BeforeID != 0 {
		add("id < ?", f.BeforeID)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func scanLog(row interface{ Scan(...any) error }) (store.UsageLog, error) {
	var l store.UsageLog
	var other sql.NullString
	err := row.Scan(&l.ID, &l.Type, &l.UserID, &l.TokenID, &l.ChannelID, &l.Model, &l.PromptTokens, &l.CompletionTokens,
		&l.Quota, &l.LatencyMS, &l.RequestID, &other, &l.CreatedAt, &l.TeamID, &l.OrgID)
	l.Other = rawFrom(other)
	l.CreatedAt = l.CreatedAt.UTC()
	return l, err
}

// List returns matching logs newest first (by id) and their count (capped,
// see Page).
func (r logRepo) List(ctx context.Context, f store.LogFilter, p store.Page) ([]store.UsageLog, int, error) {
	pg, err := r.Page(ctx, f, p)
	return pg.Items, pg.Total, err
}

// Get returns one row by id.
func (r logRepo) Get(ctx context.Context, id int64) (store.UsageLog, error) {
	row := r.s.db.QueryRowContext(ctx, r.s.Rebind(logSelect+" WHERE id = ?"), id)
	l, err := scanLog(row)
	if err != nil {
		return store.UsageLog{}, wrap(err, "get log")
	}
	return l, nil
}

// Prune deletes at most limit rows created before before, oldest ids
// first, in one statement: a bounded delete holds its locks briefly, so
// pruning a large backlog never stalls the billing writer's inserts.
// MySQL takes LIMIT on DELETE but not in an IN subquery; SQLite and
// PostgreSQL take the subquery.
func (r logRepo) Prune(ctx context.Context, before time.Time, limit int) (int64, error) {
	q := "DELETE FROM usage_logs WHERE id IN (SELECT id FROM usage_logs WHERE created_at < ? ORDER BY id LIMIT ?)"
	if r.s.dialect == MySQL {
		q = "DELETE FROM usage_logs WHERE created_at < ? ORDER BY id LIMIT ?"
	}
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(q), dbTime(before), limit)
	if err != nil {
		return 0, wrap(err, "prune logs")
	}
	n, err := res.RowsAffected()
	return n, wrap(err, "prune logs")
}
