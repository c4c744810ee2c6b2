package store

import (
	"context"
	"encoding/json"
)

// Task statuses and billing states the task repository's conditions use
// (the task package owns the full lists).
const (
	TaskSuccess     = "SUCCESS"
	TaskFailure     = "FAILURE"
	TaskBillingHeld = "held"
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
	UsageFacts json.RawMessage
	UserID     int64
	TokenID    int64
	ChannelID  int64
	// KeyIndex is the position in the channel's key list of the key the
	// task was submitted with: an upstream task belongs to that key's
	// account, so every later request about it uses that key alone.
	KeyIndex      int
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
	// TeamID and OrgID are the submitter's team and organisation at the
	// submit (0: none), and TeamPays whether the team's shared balance
	// holds the reservation: its rows and its end name them in any
	// process, whatever the membership is by then.
	TeamID   int64
	OrgID    int64
	TeamPays bool
}

// TaskFilter narrows a task listing; zero values do not filter.
type TaskFilter struct {
	UserID   int64
	Status   string
	Platform string
	Model    string
}

// TaskRepo keeps task records. Updates that end or move a task are
// conditional, so that of several nodes exactly one wins each step.
type TaskRepo interface {
	// Insert stores a new task and sets its ID.
	Insert(ctx context.Context, t *Task) error
	// Get, GetPublic: a missing task is ErrNotFound.
	Get(ctx context.Context, id int64) (*Task, error)
	GetPublic(ctx context.Context, publicID string) (*Task, error)
	// GetPublicMany returns the tasks among publicIDs that exist, in no order.
	GetPublicMany(ctx context.Context, publicIDs []string) ([]*Task, error)
	// List returns tasks newest first (page size at most 100, default 20),
	// with the total matching f.
	List(ctx context.Context, f TaskFilter, p Page) ([]*Task, int, error)
	// Due returns up to limit non-terminal tasks whose next poll time has
	// come and that no live lease holds.
	Due(ctx context.Context, now int64, limit int) ([]*Task, error)
	// Lease claims a task for owner until until; false when another node
	// holds a live lease or the task has ended.
	Lease(ctx context.Context, id int64, owner string, now, until int64) (bool, error)
	// Progress writes a non-terminal poll outcome of a task owner leases;
	// nil State or Data keeps the stored one.
	Progress(ctx context.Context, t *Task, owner string) (bool, error)
	// Finish moves a task to a terminal status once (false when it had
	// already ended); clearData discards the stored result.
	Finish(ctx context.Context, t *Task, clearData bool) (bool, error)
	// MarkBilling moves the billing status from held to to, once.
	MarkBilling(ctx context.Context, id int64, to string, charged int64) (bool, error)
	// Unbilled returns terminal tasks still holding a reservation that were
	// last updated before before.
	Unbilled(ctx context.Context, before int64, limit int) ([]*Task, error)
}
