package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type taskRepo struct{ s *Store }

// Tasks returns the task records.
func (s *Store) Tasks() store.TaskRepo { return taskRepo{s} }

const taskColumns = `public_id, upstream_id, plugin_key, plugin_version, action, model, upstream_model,
status, progress, fail_reason, result_url, data, state, usage_facts, user_id, token_id, channel_id, grp,
retain_result, quota_reserved, quota_charged, billing_key, billing_status, poll_failures, next_poll_at,
lease_owner, lease_until, submitted_at, started_at, finished_at, created_at, updated_at, deadline, key_index,
team_id, org_id, team_pays`

// taskCount is the number of columns in taskColumns.
const taskCount = 37

// taskKeyIndexMigration records which key of a channel's list submitted a
// task, so its polls and content requests use that key alone.
var taskKeyIndexMigration = Migration{Version: 136, Name: "task key index", SQL: `
ALTER TABLE tasks ADD key_index {{int}} NOT NULL DEFAULT 0;
`}

// taskTeamMigration records the submitter's team and organisation with a
// task, and whether the team's shared balance pays it, so its rows and the
// end of its reservation name them in any process, after a restart too
// (the membership may have changed since the submit).
var taskTeamMigration = Migration{Version: 141, Name: "task team", SQL: `
ALTER TABLE tasks ADD team_id {{bigint}} NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD org_id {{bigint}} NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD team_pays {{bool}} NOT NULL DEFAULT FALSE;
`}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func taskArgs(t *store.Task) []any {
	return []any{t.PublicID, t.UpstreamID, t.PluginKey, t.PluginVersion, t.Action, t.Model, t.UpstreamModel,
		t.Status, t.Progress, t.FailReason, t.ResultURL, nullJSON(t.Data), nullJSON(t.State), nullJSON(t.UsageFacts),
		t.UserID, t.TokenID, t.ChannelID, t.Group, t.RetainResult, t.QuotaReserved, t.QuotaCharged, t.BillingKey,
		t.BillingStatus, t.PollFailures, t.NextPollAt, t.LeaseOwner, t.LeaseUntil, t.SubmittedAt, t.StartedAt,
		t.FinishedAt, t.CreatedAt, t.UpdatedAt, t.Deadline, t.KeyIndex, t.TeamID, t.OrgID, t.TeamPays}
}

// Insert stores a new task and sets its ID.
func (r taskRepo) Insert(ctx context.Context, t *store.Task) error {
	q := "INSERT INTO tasks (" + taskColumns + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", taskCount), ", ") + ")"
	if r.s.dialect == Postgres {
		return r.s.db.QueryRowContext(ctx, r.s.Rebind(q+" RETURNING id"), taskArgs(t)...).Scan(&t.ID)
	}
	res, err := r.s.db.ExecContext(ctx, q, taskArgs(t)...)
	if err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	t.ID, err = res.LastInsertId()
	return err
}

func scanTask(row interface{ Scan(...any) error }) (*store.Task, error) {
	var t store.Task
	var data, state, facts sql.NullString
	err := row.Scan(&t.ID, &t.PublicID, &t.UpstreamID, &t.PluginKey, &t.PluginVersion, &t.Action, &t.Model,
		&t.UpstreamModel, &t.Status, &t.Progress, &t.FailReason, &t.ResultURL, &data, &state, &facts,
		&t.UserID, &t.TokenID, &t.ChannelID, &t.Group, &t.RetainResult, &t.QuotaReserved, &t.QuotaCharged,
		&t.BillingKey, &t.BillingStatus, &t.PollFailures, &t.NextPollAt, &t.LeaseOwner, &t.LeaseUntil,
		&t.SubmittedAt, &t.StartedAt, &t.FinishedAt, &t.CreatedAt, &t.UpdatedAt, &t.Deadline, &t.KeyIndex,
		&t.TeamID, &t.OrgID, &t.TeamPays)
	if err != nil {
		return nil, err
	}
	if data.Valid {
		t.Data = json.RawMessage(data.String)
	}
	if state.Valid {
		t.State = json.RawMessage(state.String)
	}
	if facts.Valid {
		t.UsageFacts = json.RawMessage(facts.String)
	}
	return &t, nil
}

func (r taskRepo) queryTasks(ctx context.Context, where string, args ...any) ([]*store.Task, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT id, "+taskColumns+" FROM tasks "+where), args...)
	if err != nil {
		return nil, fmt.Errorf("query tasks: %w", err)
	}
	defer rows.Close()
	var out []*store.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("scan task: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (r taskRepo) one(ctx context.Context, where string, args ...any) (*store.Task, error) {
	ts, err := r.queryTasks(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, store.ErrNotFound
	}
	return ts[0], nil
}

// Get returns a task by internal id.
func (r taskRepo) Get(ctx context.Context, id int64) (*store.Task, error) {
	return r.one(ctx, "WHERE id = ?", id)
}

// GetPublic returns a task by public id.
func (r taskRepo) GetPublic(ctx context.Context, publicID string) (*store.Task, error) {
	return r.one(ctx, "WHERE public_id = ?", publicID)
}

// GetPublicMany returns the tasks among publicIDs that exist, in no order.
func (r taskRepo) GetPublicMany(ctx context.Context, publicIDs []string) ([]*store.Task, error) {
	if len(publicIDs) == 0 {
		return nil, nil
	}
	args := make([]any, len(publicIDs))
	for i, id := range publicIDs {
		args[i] = id
	}
	return r.queryTasks(ctx, "WHERE public_id IN ("+taskPlaceholders(len(args))+")", args...)
}

func taskPlaceholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// List returns tasks newest first, with the total matching f.
func (r taskRepo) List(ctx context.Context, f store.TaskFilter, p store.Page) ([]*store.Task, int, error) {
	var conds []string
	var args []any
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	if f.UserID != 0 {
		add("user_id = ?", f.UserID)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.Platform != "" {
		add("plugin_key = ?", f.Platform)
	}
	if f.Model != "" {
		add("model = ?", f.Model)
	}
	where := ""
	if len(conds) > 0 {
		where = "WHERE " + strings.Join(conds, " AND ")
	}
	var total int
	if err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT COUNT(*) FROM tasks "+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count tasks: %w", err)
	}
	size := p.PageSize
	if size <= 0 {
		size = 20
	}
	size = min(size, 100)
	page := max(p.Page, 1)
	ts, err := r.queryTasks(ctx, where+" ORDER BY id DESC LIMIT ? OFFSET ?", append(args, size, (page-1)*size)...)
	return ts, total, err
}

// Due returns up to limit non-terminal tasks whose next poll time has come
// and that no live lease holds.
func (r taskRepo) Due(ctx context.Context, now int64, limit int) ([]*store.Task, error) {
	return r.queryTasks(ctx, "WHERE status NOT IN (?, ?) AND next_poll_at <= ? AND lease_until < ? ORDER BY next_poll_at LIMIT ?",
		store.TaskSuccess, store.TaskFailure, now, now, limit)
}

// Lease claims a task for owner until the given time. It reports false when
// another node holds a live lease or the task has ended: that node polls it.
func (r taskRepo) Lease(ctx context.Context, id int64, owner string, now, until int64) (bool, error) {
	return r.execOne(ctx, "UPDATE tasks SET lease_owner = ?, lease_until = ? WHERE id = ? AND lease_until < ? AND status NOT IN (?, ?)",
		owner, until, id, now, store.TaskSuccess, store.TaskFailure)
}

func (r taskRepo) execOne(ctx context.Context, q string, args ...any) (bool, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind(q), args...)
	if err != nil {
		return false, fmt.Errorf("update task: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Progress writes a non-terminal poll outcome of a task this node leases.
// A nil state or data keeps the stored one.
func (r taskRepo) Progress(ctx context.Context, t *store.Task, owner string) (bool, error) {
	return r.execOne(ctx, `UPDATE tasks SET status = ?, progress = ?, fail_reason = ?, result_url = ?,
data = COALESCE(?, data), state = COALESCE(?, state), poll_failures = ?, next_poll_at = ?, started_at = ?, updated_at = ?, lease_until = 0
WHERE id = ? AND lease_owner = ? AND status NOT IN (?, ?)`,
		t.Status, t.Progress, t.FailReason, t.ResultURL, nullJSON(t.Data), nullJSON(t.State), t.PollFailures,
		t.NextPollAt, t.StartedAt, t.UpdatedAt, t.ID, owner, store.TaskSuccess, store.TaskFailure)
}

// Finish moves a task to a terminal status once: it reports false when the
// task had already ended, so only one caller goes on to settle or refund.
// clearData discards the stored result (retainResult=false).
func (r taskRepo) Finish(ctx context.Context, t *store.Task, clearData bool) (bool, error) {
	dataExpr, args := "COALESCE(?, data)", []any{t.Status, t.Progress, t.FailReason, t.ResultURL, nullJSON(t.Data)}
	if clearData {
		dataExpr, args = "NULL", args[:4]
	}
	args = append(args, nullJSON(t.State), t.PollFailures, t.FinishedAt, t.UpdatedAt, t.ID, store.TaskSuccess, store.TaskFailure)
	return r.execOne(ctx, `UPDATE tasks SET status = ?, progress = ?, fail_reason = ?, result_url = ?,
data = `+dataExpr+`, state = COALESCE(?, state), poll_failures = ?, finished_at = ?, updated_at = ?, lease_until = 0
WHERE id = ? AND status NOT IN (?, ?)`, args...)
}

// MarkBilling moves the billing status from held to to, once. Only the
// caller that wins this conditional update may move quota.
func (r taskRepo) MarkBilling(ctx context.Context, id int64, to string, charged int64) (bool, error) {
	return r.execOne(ctx, "UPDATE tasks SET billing_status = ?, quota_charged = ? WHERE id = ? AND billing_status = ?",
		to, charged, id, store.TaskBillingHeld)
}

// Unbilled returns terminal tasks still holding a reservation that were
// last updated before the given time.
func (r taskRepo) Unbilled(ctx context.Context, before int64, limit int) ([]*store.Task, error) {
	return r.queryTasks(ctx, "WHERE status IN (?, ?) AND billing_status = ? AND updated_at < ? ORDER BY id LIMIT ?",
		store.TaskSuccess, store.TaskFailure, store.TaskBillingHeld, before, limit)
}
