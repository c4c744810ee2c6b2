package task

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"math/big"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// Task is one persisted task. Times are Unix milliseconds; zero means unset.
type Task struct {
	ID            int64
	PublicID      string
	UpstreamID    string
	PluginKey     string
	PluginVersion string
	Action        string
	Model         string
	UpstreamModel string
	Status        string
	Progress      string
	FailReason    string
	ResultURL     string
	// Data is the latest snapshot (JSON), nil when discarded or never set.
	Data json.RawMessage
	// State is plugin-private JSON carried across polls.
	State json.RawMessage
	// UsageFacts are the facts priced at submit, kept to re-price at
	// completion.
	UsageFacts    json.RawMessage
	UserID        int64
	TokenID       int64
	ChannelID     int64
	Group         string
	RetainResult  bool
	QuotaReserved int64
	QuotaCharged  int64
	BillingKey    string
	BillingStatus string
	PollFailures  int
	NextPollAt    int64
	LeaseOwner    string
	LeaseUntil    int64
	SubmittedAt   int64
	StartedAt     int64
	FinishedAt    int64
	CreatedAt     int64
	UpdatedAt     int64
	Deadline      int64

	// hold is the reservation while the submitting process has it; a task
	// read from the database restores it from BillingKey and QuotaReserved.
	hold *billing.Hold
}

// Filter narrows a task listing; zero values do not filter.
type Filter struct {
	UserID   int64
	Status   string
	Platform string
	Model    string
}

// Store keeps tasks in the gateway's SQL database.
type Store struct {
	s  *sqlstore.Store
	db *sql.DB
}

// NewStore wraps an opened sqlstore (migration 110 is applied by Open).
func NewStore(s *sqlstore.Store) *Store {
	if s == nil {
		return &Store{}
	}
	return &Store{s: s, db: s.DB()}
}

const taskColumns = `public_id, upstream_id, plugin_key, plugin_version, action, model, upstream_model,
status, progress, fail_reason, result_url, data, state, usage_facts, user_id, token_id, channel_id, grp,
retain_result, quota_reserved, quota_charged, billing_key, billing_status, poll_failures, next_poll_at,
lease_owner, lease_until, submitted_at, started_at, finished_at, created_at, updated_at, deadline`

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func (t *Task) args() []any {
	return []any{t.PublicID, t.UpstreamID, t.PluginKey, t.PluginVersion, t.Action, t.Model, t.UpstreamModel,
		t.Status, t.Progress, t.FailReason, t.ResultURL, nullJSON(t.Data), nullJSON(t.State), nullJSON(t.UsageFacts),
		t.UserID, t.TokenID, t.ChannelID, t.Group, t.RetainResult, t.QuotaReserved, t.QuotaCharged, t.BillingKey,
		t.BillingStatus, t.PollFailures, t.NextPollAt, t.LeaseOwner, t.LeaseUntil, t.SubmittedAt, t.StartedAt,
		t.FinishedAt, t.CreatedAt, t.UpdatedAt, t.Deadline}
}

// Insert stores a new task and sets its ID.
func (st *Store) Insert(ctx context.Context, t *Task) error {
	q := "INSERT INTO tasks (" + taskColumns + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", 33), ", ") + ")"
	if st.s.SQLDialect() == sqlstore.Postgres {
		return st.db.QueryRowContext(ctx, st.s.Rebind(q+" RETURNING id"), t.args()...).Scan(&t.ID)
	}
	res, err := st.db.ExecContext(ctx, q, t.args()...)
	if err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	t.ID, err = res.LastInsertId()
	return err
}

type scanner interface{ Scan(...any) error }

func scanTask(row scanner) (*Task, error) {
	var t Task
	var data, state, facts sql.NullString
	err := row.Scan(&t.ID, &t.PublicID, &t.UpstreamID, &t.PluginKey, &t.PluginVersion, &t.Action, &t.Model,
		&t.UpstreamModel, &t.Status, &t.Progress, &t.FailReason, &t.ResultURL, &data, &state, &facts,
		&t.UserID, &t.TokenID, &t.ChannelID, &t.Group, &t.RetainResult, &t.QuotaReserved, &t.QuotaCharged,
		&t.BillingKey, &t.BillingStatus, &t.PollFailures, &t.NextPollAt, &t.LeaseOwner, &t.LeaseUntil,
		&t.SubmittedAt, &t.StartedAt, &t.FinishedAt, &t.CreatedAt, &t.UpdatedAt, &t.Deadline)
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

func (st *Store) queryTasks(ctx context.Context, where string, args ...any) ([]*Task, error) {
	rows, err := st.db.QueryContext(ctx, st.s.Rebind("SELECT id, "+taskColumns+" FROM tasks "+where), args...)
	if err != nil {
		return nil, fmt.Errorf("query tasks: %w", err)
	}
	defer rows.Close()
	var out []*Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("scan task: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (st *Store) one(ctx context.Context, where string, args ...any) (*Task, error) {
	ts, err := st.queryTasks(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, store.ErrNotFound
	}
	return ts[0], nil
}

// Get returns a task by internal id.
func (st *Store) Get(ctx context.Context, id int64) (*Task, error) {
	return st.one(ctx, "WHERE id = ?", id)
}

// GetPublic returns a task by public id.
func (st *Store) GetPublic(ctx context.Context, publicID string) (*Task, error) {
	return st.one(ctx, "WHERE public_id = ?", publicID)
}

// GetPublicMany returns the tasks among publicIDs that exist, in no order.
func (st *Store) GetPublicMany(ctx context.Context, publicIDs []string) ([]*Task, error) {
	if len(publicIDs) == 0 {
		return nil, nil
	}
	args := make([]any, len(publicIDs))
	for i, id := range publicIDs {
		args[i] = id
	}
	return st.queryTasks(ctx, "WHERE public_id IN ("+placeholders(len(args))+")", args...)
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// List returns tasks newest first, with the total matching f.
func (st *Store) List(ctx context.Context, f Filter, p store.Page) ([]*Task, int, error) {
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
	if err := st.db.QueryRowContext(ctx, st.s.Rebind("SELECT COUNT(*) FROM tasks "+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count tasks: %w", err)
	}
	size := p.PageSize
	if size <= 0 {
		size = 20
	}
	size = min(size, 100)
	page := max(p.Page, 1)
	ts, err := st.queryTasks(ctx, where+" ORDER BY id DESC LIMIT ? OFFSET ?", append(args, size, (page-1)*size)...)
	return ts, total, err
}

// Due returns up to limit non-terminal tasks whose next poll time has come
// and that no live lease holds.
func (st *Store) Due(ctx context.Context, now int64, limit int) ([]*Task, error) {
	return st.queryTasks(ctx, "WHERE status NOT IN (?, ?) AND next_poll_at <= ? AND lease_until < ? ORDER BY next_poll_at LIMIT ?",
		StatusSuccess, StatusFailure, now, now, limit)
}

// Lease claims a task for owner until the given time. It reports false when
// another node holds a live lease or the task has ended: that node polls it.
func (st *Store) Lease(ctx context.Context, id int64, owner string, now, until int64) (bool, error) {
	return st.execOne(ctx, "UPDATE tasks SET lease_owner = ?, lease_until = ? WHERE id = ? AND lease_until < ? AND status NOT IN (?, ?)",
		owner, until, id, now, StatusSuccess, StatusFailure)
}

func (st *Store) execOne(ctx context.Context, q string, args ...any) (bool, error) {
	res, err := st.db.ExecContext(ctx, st.s.Rebind(q), args...)
	if err != nil {
		return false, fmt.Errorf("update task: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Progress writes a non-terminal poll outcome of a task this node leases.
// A nil state or data keeps the stored one.
func (st *Store) Progress(ctx context.Context, t *Task, owner string) (bool, error) {
	return st.execOne(ctx, `UPDATE tasks SET status = ?, progress = ?, fail_reason = ?, result_url = ?,
data = COALESCE(?, data), state = COALESCE(?, state), poll_failures = ?, next_poll_at = ?, started_at = ?, updated_at = ?, lease_until = 0
WHERE id = ? AND lease_owner = ? AND status NOT IN (?, ?)`,
		t.Status, t.Progress, t.FailReason, t.ResultURL, nullJSON(t.Data), nullJSON(t.State), t.PollFailures,
		t.NextPollAt, t.StartedAt, t.UpdatedAt, t.ID, owner, StatusSuccess, StatusFailure)
}

// Finish moves a task to a terminal status once: it reports false when the
// task had already ended, so only one caller goes on to settle or refund.
// clearData discards the stored result (retainResult=false).
func (st *Store) Finish(ctx context.Context, t *Task, clearData bool) (bool, error) {
	dataExpr, args := "COALESCE(?, data)", []any{t.Status, t.Progress, t.FailReason, t.ResultURL, nullJSON(t.Data)}
	if clearData {
		dataExpr, args = "NULL", args[:4]
	}
	args = append(args, nullJSON(t.State), t.PollFailures, t.FinishedAt, t.UpdatedAt, t.ID, StatusSuccess, StatusFailure)
	return st.execOne(ctx, `UPDATE tasks SET status = ?, progress = ?, fail_reason = ?, result_url = ?,
data = `+dataExpr+`, state = COALESCE(?, state), poll_failures = ?, finished_at = ?, updated_at = ?, lease_until = 0
WHERE id = ? AND status NOT IN (?, ?)`, args...)
}

// MarkBilling moves the billing status from held to to, once. Only the
// caller that wins this conditional update may move quota.
func (st *Store) MarkBilling(ctx context.Context, id int64, to string, charged int64) (bool, error) {
	return st.execOne(ctx, "UPDATE tasks SET billing_status = ?, quota_charged = ? WHERE id = ? AND billing_status = ?",
		to, charged, id, BillingHeld)
}

// Unbilled returns terminal tasks still holding a reservation that were
// last updated before the given time.
func (st *Store) Unbilled(ctx context.Context, before int64, limit int) ([]*Task, error) {
	return st.queryTasks(ctx, "WHERE status IN (?, ?) AND billing_status = ? AND updated_at < ? ORDER BY id LIMIT ?",
		StatusSuccess, StatusFailure, BillingHeld, before, limit)
}

// newPublicID returns "task_" and 32 random base62 characters: unguessable,
// and it reveals nothing of the upstream id.
func newPublicID() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 32)
	n := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic("task: crypto/rand failed: " + err.Error())
		}
		b[i] = alphabet[v.Int64()]
	}
	return "task_" + string(b)
}

func nowMS() int64 { return time.Now().UnixMilli() }
