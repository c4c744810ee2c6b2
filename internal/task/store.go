package task

import (
	"context"
	"crypto/rand"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"math/big"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Task is one persisted task (store.Task) and, while the submitting process
// has it, its reservation. Times are Unix milliseconds; zero means unset.
type Task struct {
	store.Task

	// ticket is the reservation and its budget share while the submitting
	// process has them; a task read from the database restores them from
	// its record (ticketOf).
	ticket *admission.Ticket
	// priceVersion is the price version the submitting process admitted
	// the task at; a task read from the database has none and looks it up
	// by its submit time (priceVersionOf).
	priceVersion int64
	// guards is what the guardrails did on the submission (the submit
	// row's other.guardrails).
	guards []guardrail.Record
}

// Filter narrows a task listing; zero values do not filter.
type Filter = store.TaskFilter

// Store is the task service's view of the task repository: the records
// wrapped as Tasks.
type Store struct{ repo store.TaskRepo }

// NewStore wraps the task repository of the gateway's store.
func NewStore(repo store.TaskRepo) *Store { return &Store{repo: repo} }

func wrapTask(t *store.Task, err error) (*Task, error) {
	if err != nil {
		return nil, err
	}
	return &Task{Task: *t}, nil
}

func wrapTasks(ts []*store.Task, err error) ([]*Task, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*Task, len(ts))
	for i, t := range ts {
		out[i] = &Task{Task: *t}
	}
	return out, nil
}

// Insert stores a new task and sets its ID.
func (st *Store) Insert(ctx context.Context, t *Task) error { return st.repo.Insert(ctx, &t.Task) }

// Get returns a task by internal id.
func (st *Store) Get(ctx context.Context, id int64) (*Task, error) {
	return wrapTask(st.repo.Get(ctx, id))
}

// GetPublic returns a task by public id.
func (st *Store) GetPublic(ctx context.Context, publicID string) (*Task, error) {
	return wrapTask(st.repo.GetPublic(ctx, publicID))
}

// GetPublicMany returns the tasks among publicIDs that exist, in no order.
func (st *Store) GetPublicMany(ctx context.Context, publicIDs []string) ([]*Task, error) {
	return wrapTasks(st.repo.GetPublicMany(ctx, publicIDs))
}

// List returns tasks newest first, with the total matching f.
func (st *Store) List(ctx context.Context, f Filter, p store.Page) ([]*Task, int, error) {
	ts, total, err := st.repo.List(ctx, f, p)
	out, err := wrapTasks(ts, err)
	return out, total, err
}

// Due returns up to limit non-terminal tasks whose next poll time has come
// and that no live lease holds.
func (st *Store) Due(ctx context.Context, now int64, limit int) ([]*Task, error) {
	return wrapTasks(st.repo.Due(ctx, now, limit))
}

// Lease claims a task for owner until the given time. It reports false when
// another node holds a live lease or the task has ended: that node polls it.
func (st *Store) Lease(ctx context.Context, id int64, owner string, now, until int64) (bool, error) {
	return st.repo.Lease(ctx, id, owner, now, until)
}

// Progress writes a non-terminal poll outcome of a task this node leases.
// A nil state or data keeps the stored one.
func (st *Store) Progress(ctx context.Context, t *Task, owner string) (bool, error) {
	return st.repo.Progress(ctx, &t.Task, owner)
}

// Finish moves a task to a terminal status once: it reports false when the
// task had already ended, so only one caller goes on to settle or refund.
// clearData discards the stored result (retainResult=false).
func (st *Store) Finish(ctx context.Context, t *Task, clearData bool) (bool, error) {
	return st.repo.Finish(ctx, &t.Task, clearData)
}

// MarkBilling moves the billing status from held to to, once. Only the
// caller that wins this conditional update may move quota.
func (st *Store) MarkBilling(ctx context.Context, id int64, to string, charged int64) (bool, error) {
	return st.repo.MarkBilling(ctx, id, to, charged)
}

// Unbilled returns terminal tasks still holding a reservation that were
// last updated before the given time.
func (st *Store) Unbilled(ctx context.Context, before int64, limit int) ([]*Task, error) {
	return wrapTasks(st.repo.Unbilled(ctx, before, limit))
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
