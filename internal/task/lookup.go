package task

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// OriginTasks loads the tasks a submission refers to (a decoder's
// originTaskIds). Each must be the caller's own task of the same plugin,
// and all must share one channel: the follow-up runs where its origin ran.
func (s *Service) OriginTasks(ctx context.Context, p *auth.Principal, pluginKey string, v any) ([]*Task, error) {
	if v == nil {
		return nil, nil
	}
	ids, ok := v.([]any)
	if !ok {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "invalid_plugin_result", Message: "originTaskIds must be an array of task ids"}
	}
	var out []*Task
	for _, raw := range ids {
		id, _ := raw.(string)
		t, err := s.store.GetPublic(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (t.UserID != p.UserID || t.PluginKey != pluginKey)) {
			return nil, TaskNotFound(id)
		}
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && out[0].ChannelID != t.ChannelID {
			return nil, ir.BadRequest("invalid_request", "the referenced tasks ran on different channels and cannot be combined")
		}
		out = append(out, t)
	}
	return out, nil
}

// OwnTask finds a task the caller may see, of pluginKey's when it is not
// empty. A task whose result was discarded (retainResult false) is not
// found by design.
func (s *Service) OwnTask(ctx context.Context, p *auth.Principal, id, pluginKey string) (*Task, error) {
	t, err := s.store.GetPublic(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (t.UserID != p.UserID || (pluginKey != "" && t.PluginKey != pluginKey))) {
		return nil, TaskNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	if t.Discarded() {
		return nil, TaskNotFound(id)
	}
	return t, nil
}

// TaskNotFound is the answer for a task id the caller may not see, the
// same whether it does not exist or is someone else's.
func TaskNotFound(id string) *ir.Error {
	return &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "task_not_found", Message: fmt.Sprintf("task %s not found", Truncate(id, 80))}
}

// Ended reports whether the task has reached SUCCESS or FAILURE.
func (t *Task) Ended() bool { return terminal(t.Status) }

// Discarded reports whether the task ended with its result thrown away
// (retainResult false): such a task is no longer shown to anyone.
func (t *Task) Discarded() bool { return !t.RetainResult && terminal(t.Status) }

// Statuses lists the seven task statuses.
func Statuses() []string { return slices.Clone(knownStatuses) }
