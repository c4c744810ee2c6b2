package task

import (
	"encoding/json"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// channelBase is the base URL hooks get: the channel's, or the plugin's
// default for a type 61 channel saved without one.
func channelBase(ch *store.Channel, l *plugin.Loaded) string {
	base := strings.TrimRight(strings.TrimSpace(ch.BaseURL), "/")
	if base == "" && l != nil {
		base = strings.TrimRight(l.Manifest.BaseURL, "/")
	}
	return base
}

// submitInput is everything a driver context is built from.
type submitInput struct {
	requestBody   any
	headers       map[string]any
	action        string
	model         string
	upstreamModel string
	files         []any
	publicID      string
	originTasks   []any
}

// driverContext builds the DriverContext of PLUGIN-CONTEXT.md.
func driverContext(in submitInput, ch *store.Channel, l *plugin.Loaded, cr credentials) map[string]any {
	m := map[string]any{
		"requestBody":    in.requestBody,
		"requestHeaders": in.headers,
		"action":         in.action,
		"model":          in.model,
		"upstreamModel":  in.upstreamModel,
		"baseUrl":        channelBase(ch, l),
		"files":          in.files,
		"publicTaskId":   in.publicID,
	}
	if in.upstreamModel != in.model {
		m["modelMappingResolved"] = true
	}
	if len(ch.Settings) > 0 {
		m["channelSettings"] = ch.Settings
	}
	if in.originTasks != nil {
		m["originTasks"] = in.originTasks
	}
	cr.fields(m)
	return m
}

// queryContext builds the TaskQueryContext of a stored task.
func queryContext(t *Task, ch *store.Channel, l *plugin.Loaded, cr credentials) map[string]any {
	m := map[string]any{
		"taskId":        t.UpstreamID,
		"publicTaskId":  t.PublicID,
		"action":        t.Action,
		"model":         t.Model,
		"upstreamModel": t.UpstreamModel,
		"data":          rawOrNil(t.Data),
		"state":         rawOrNil(t.State),
		"baseUrl":       channelBase(ch, l),
	}
	if len(ch.Settings) > 0 {
		m["channelSettings"] = ch.Settings
	}
	cr.fields(m)
	return m
}

// batchContext is the fetch fields of a query context plus the tasks.
func batchContext(tasks []map[string]any, ch *store.Channel, l *plugin.Loaded, cr credentials) map[string]any {
	m := map[string]any{"baseUrl": channelBase(ch, l)}
	if len(ch.Settings) > 0 {
		m["channelSettings"] = ch.Settings
	}
	cr.fields(m)
	list := make([]any, len(tasks))
	for i, t := range tasks {
		list[i] = t
	}
	m["tasks"] = list
	return m
}

// rawOrNil hands stored JSON to a hook as a value (json.RawMessage is
// decoded by the runtime), or null.
func rawOrNil(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// View is the task as renderers see it (the render input of
// PLUGIN-CONTEXT.md) and the shape of GET /v1/tasks. It never holds the
// upstream id or origin tasks.
func (t *Task) View() map[string]any {
	v := map[string]any{
		"task_id":     t.PublicID,
		"platform":    t.PluginKey,
		"model":       t.Model,
		"status":      t.Status,
		"progress":    t.Progress,
		"fail_reason": t.FailReason,
		"created_at":  seconds(t.CreatedAt),
		"updated_at":  seconds(t.UpdatedAt),
		"finished_at": seconds(t.FinishedAt),
		"data":        rawOrNil(t.Data),
		"properties":  map[string]any{"origin_model_name": t.Model, "upstream_model_name": t.UpstreamModel},
	}
	if t.ResultURL != "" {
		v["result_url"] = t.ResultURL
	}
	return v
}

func seconds(ms int64) int64 { return ms / 1000 }

// originTaskValue is one ctx.originTasks item; data is null when the
// referenced task's result was discarded.
func originTaskValue(t *Task) map[string]any {
	return map[string]any{"taskId": t.PublicID, "upstreamTaskId": t.UpstreamID, "action": t.Action,
		"status": t.Status, "data": rawOrNil(t.Data)}
}
