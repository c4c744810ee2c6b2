package task

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// pluginCaller is a loaded plugin seen as a set of callable hooks.
type pluginCaller struct{ l *plugin.Loaded }

func (p pluginCaller) has(hook string) bool { return p.l.Manifest.Hooks.Has(hook) }

func (p pluginCaller) call(ctx context.Context, hook string, args ...any) (any, error) {
	return call(ctx, p.l, hook, args...)
}

// pollResult is a normalised task result (parseTaskResult, immediate, or a
// batch item).
type pollResult struct {
	status    string
	progress  string
	reason    string
	url       string
	remoteURL string
	taskID    string
	usage     any
	state     any
	hasState  bool
	data      any
	hasData   bool
	raw       map[string]any
}

// normalizeResult reads a hook's result; a non-object is an UNKNOWN result.
func normalizeResult(v any) pollResult {
	m, ok := v.(map[string]any)
	if !ok {
		return pollResult{status: StatusUnknown}
	}
	r := pollResult{status: normalizeStatus(m["status"]), raw: m}
	r.progress = progressText(m["progress"])
	r.reason, _ = m["reason"].(string)
	r.url, _ = m["url"].(string)
	r.remoteURL, _ = m["remoteUrl"].(string)
	r.taskID = stringOf(m["taskId"])
	r.usage = m["usage"]
	r.state, r.hasState = m["state"]
	r.data, r.hasData = m["data"]
	return r
}

// progressText keeps progress in the "N%" form clients of the established
// gateways read.
func progressText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10) + "%"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64) + "%"
	}
	return ""
}

// applyProgress copies a result's fields onto the task. The state is
// written only when the hook returned one (SPEC §4.2 rule 1).
func applyProgress(t *Task, r pollResult) {
	t.Status = r.status
	if r.progress != "" {
		t.Progress = r.progress
	}
	if r.reason != "" {
		t.FailReason = r.reason
	}
	if r.url != "" {
		t.ResultURL = r.url
	}
	if r.hasState {
		t.State = marshalData(r.state)
	}
}

// marshalData encodes a snapshot; nil stays nil (SQL NULL).
func marshalData(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// sanitize runs sanitizeTaskData when the plugin has it, so the stored
// snapshot holds what the plugin wants clients to see.
func (s *Service) sanitize(ctx context.Context, p pluginCaller, body any, publicID string) any {
	if !p.has(manifest.HookSanitizeTaskData) {
		return body
	}
	v, err := p.call(ctx, manifest.HookSanitizeTaskData, body, publicID)
	if err != nil {
		s.log.Warn("sanitizeTaskData failed; the raw snapshot is kept", "plugin", p.l.Key, "err", hookMessage(err, nil))
		return body
	}
	return v
}

// completionValue is the snake_case completion result of
// extractUsageOnComplete.
func completionValue(t *Task, r pollResult) map[string]any {
	m := map[string]any{"code": 0, "task_id": t.PublicID, "status": r.status}
	if r.reason != "" {
		m["reason"] = r.reason
	}
	if r.url != "" {
		m["url"] = r.url
	}
	if r.remoteURL != "" {
		m["remote_url"] = r.remoteURL
	}
	if r.progress != "" {
		m["progress"] = r.progress
	}
	for src, dst := range map[string]string{"completionTokens": "completion_tokens", "totalTokens": "total_tokens"} {
		if v, ok := r.raw[src]; ok {
			m[dst] = v
		}
	}
	if r.usage != nil {
		m["usage"] = r.usage
	}
	if len(t.UsageFacts) > 0 {
		m["usage_facts"] = t.UsageFacts
	}
	return m
}

// complete ends a task with a terminal result: it stores the outcome once
// and then settles (SUCCESS) or refunds (FAILURE). data is the latest full
// snapshot, which the complete-usage hook sees even when it is not kept.
func (s *Service) complete(ctx context.Context, l *plugin.Loaded, t *Task, r pollResult, data any) {
	applyProgress(t, r)
	if data != nil {
		// The terminal answer is the latest snapshot: renders and
		// listArtifacts read the result from it.
		t.Data = marshalData(data)
	}
	now := nowMS()
	t.FinishedAt, t.UpdatedAt, t.LeaseUntil = now, now, 0
	if r.status == StatusSuccess && t.Progress == "" {
		t.Progress = "100%"
	}
	if r.status == StatusFailure && t.FailReason == "" {
		t.FailReason = "the upstream task failed"
	}
	charge := t.QuotaReserved
	if r.status == StatusSuccess {
		charge = s.completionCharge(ctx, l, t, r, data)
	}
	won, err := s.store.Finish(ctx, t, !t.RetainResult)
	if err != nil {
		s.log.Error("task outcome not stored", "task", t.PublicID, "err", err)
		return
	}
	if !won {
		return
	}
	if !t.RetainResult {
		t.Data = nil
	}
	s.bill(ctx, t, charge)
}

// bill settles or refunds a terminal task according to its status.
func (s *Service) bill(ctx context.Context, t *Task, charge int64) {
	var err error
	if t.Status == StatusSuccess {
		err = s.settle(ctx, t, charge)
	} else {
		err = s.refund(ctx, t, t.FailReason)
	}
	if err != nil {
		s.log.Error("task billing failed; the recovery sweep retries it", "task", t.PublicID, "err", err)
	}
}

// completionCharge re-prices a successful task from the completion facts
// merged over the submit facts. A plugin error keeps the reserved charge:
// the user was told that price at submit.
func (s *Service) completionCharge(ctx context.Context, l *plugin.Loaded, t *Task, r pollResult, data any) int64 {
	if !l.Manifest.Hooks.Has(manifest.HookExtractUsageOnComplete) {
		return t.QuotaReserved
	}
	v, err := call(ctx, l, manifest.HookExtractUsageOnComplete, t.View(), completionValue(t, r), data)
	if err != nil {
		s.log.Warn("extractUsageOnComplete failed; the reserved charge stands", "task", t.PublicID, "err", hookMessage(err, nil))
		return t.QuotaReserved
	}
	schema := l.Manifest.ProfileFor(t.UpstreamModel, t.Model).Schema
	facts, err := validateFacts(schema, v)
	if err != nil {
		s.log.Warn("completion usage facts invalid; the reserved charge stands", "task", t.PublicID, "err", err)
		return t.QuotaReserved
	}
	if len(facts) == 0 {
		return t.QuotaReserved
	}
	merged := map[string]any{}
	_ = json.Unmarshal(t.UsageFacts, &merged)
	var charge int64
	for k, v := range facts {
		merged[k] = v
	}
	// The task is charged at the price it was admitted at, not one that
	// took effect while it ran.
	price, err := s.d.Billing.PriceAt(t.Model, submittedAt(t))
	if err == nil {
		charge, err = s.chargeFor(l, price, t.Model, t.UpstreamModel, t.Group, merged)
	}
	if err != nil {
		s.log.Warn("completion re-pricing failed; the reserved charge stands", "task", t.PublicID, "err", err)
		return t.QuotaReserved
	}
	t.UsageFacts = marshalData(merged)
	return charge
}
