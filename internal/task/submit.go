package task

import (
	"context"
	"fmt"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// exchange builds, sends and parses the submit on one channel. An *errRetry
// means nothing was accepted upstream and the next channel may try; any
// other error ends the submission.
func (s *Service) exchange(ctx context.Context, sub *submission, t *Task, at *attempt) (*Submitted, error) {
	l := sub.Plugin
	v, err := call(ctx, l, manifest.HookBuildSubmitRequest, at.dctx)
	if err != nil {
		return nil, hookError(400, "invalid_request", err, at.cr.secrets)
	}
	d, err := egress.ParseDescriptor(v, egress.Policy{Channel: parseBase(channelBase(&at.ch.Channel, l)), Allowed: l.Manifest.AllowedHosts})
	if err != nil {
		s.log.Warn("task plugin built a request the host refuses", "plugin", l.Key, "channel", at.ch.ID, "err", scrub(err.Error(), at.cr.secrets...))
		return nil, hookError(502, "invalid_plugin_request", err, at.cr.secrets)
	}
	if d.ResponseType == "sse" {
		return s.exchangeSSE(ctx, sub, t, at, d)
	}
	resp, err := s.send(ctx, d, sub.Resolver)
	if err != nil {
		if _, ok := err.(*egress.DescriptorError); ok {
			return nil, hookError(400, "invalid_request", err, at.cr.secrets)
		}
		return nil, s.transportFailure(ctx, at, err, scrub(err.Error(), at.cr.secrets...))
	}
	if resp.status/100 != 2 {
		return nil, s.submitError(ctx, pluginCaller{l}, at, resp)
	}
	if d.Action != "" {
		sub.Action = d.Action
	}
	return s.accept(ctx, sub, t, at, resp)
}

// transportFailure is a submit request that got no answer. The gateway's
// own shortage (no descriptor, no local port) says nothing of the channel
// and every other channel would need the same: a 503 that ends the
// submission and leaves channel health alone, as for a chat call. Any
// other failure is the channel's, and the next channel may serve.
func (s *Service) transportFailure(ctx context.Context, at *attempt, err error, msg string) error {
	if short := upstream.Shortage(err); short != nil {
		short.Cause = nil // the cause names the upstream's address
		upstream.NoteShortage(ctx, s.log, short)
		return short
	}
	s.log.WarnContext(ctx, "task submit transport failure", "channel", at.ch.ID, "err", scrub(err.Error(), at.cr.secrets...))
	return &errRetry{&ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_unreachable", Message: msg, Retry: ir.RetryNext}}
}

// submitError words a non-2xx submit answer, through parseSubmitError when
// the plugin has it.
func (s *Service) submitError(ctx context.Context, l pluginCaller, at *attempt, resp *upstreamResponse) error {
	msg := fmt.Sprintf("the upstream refused the task (HTTP %d)", resp.status)
	code := "upstream_error"
	if l.has(manifest.HookParseSubmitError) {
		v, err := l.call(ctx, manifest.HookParseSubmitError, at.dctx, map[string]any{"statusCode": resp.status, "body": resp.body})
		if m, ok := v.(map[string]any); ok && err == nil {
			if s, _ := m["message"].(string); s != "" {
				msg = s
			}
			if c := stringOf(m["code"]); c != "" {
				code = c
			}
		}
	} else if text := upstreamMessage(resp.body); text != "" {
		msg += ": " + text
	}
	e := upstream.StatusError(resp.status, resp.headers,
		&ir.Error{Status: resp.status, Kind: ir.KindUpstream, Code: code, Message: scrub(msg, at.cr.secrets...)})
	// Channel health judges the upstream's status by the channel's
	// policy, as for a chat attempt: a disable_statuses answer takes the
	// key out, a retry_statuses one (or a timeout) counts towards cooling,
	// and either lets the next channel try. Any other status is the
	// request's own fault and goes back to the client as the upstream
	// said it.
	if at.ch.Policy.MovesOn(e) {
		e.Status, e.Retry = http.StatusBadGateway, ir.RetryNext
		return &errRetry{e}
	}
	e.Kind = ir.KindInvalidRequest
	return e
}

// upstreamMessage digs a readable message out of a common error envelope.
func upstreamMessage(body any) string {
	switch b := body.(type) {
	case string:
		return b
	case map[string]any:
		if m, ok := b["message"].(string); ok {
			return m
		}
		if e, ok := b["error"].(map[string]any); ok {
			if m, ok := e["message"].(string); ok {
				return m
			}
		}
		if e, ok := b["error"].(string); ok {
			return e
		}
	}
	return ""
}

// submitResult is what parseSubmitResponse returned.
type submitResult struct {
	taskID    string
	taskData  any
	hasData   bool
	immediate map[string]any
	state     any
	hasState  bool
}

func parseSubmitResult(v any) (*submitResult, *ir.Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "invalid_plugin_result", Message: "parseSubmitResponse must return an object"}
	}
	if e, ok := m["error"].(map[string]any); ok {
		return nil, refusal(e)
	}
	r := &submitResult{taskID: stringOf(m["taskId"])}
	r.taskData, r.hasData = m["taskData"]
	r.state, r.hasState = m["state"]
	r.immediate, _ = m["immediate"].(map[string]any)
	if r.taskID == "" && r.immediate == nil {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "invalid_plugin_result", Message: "parseSubmitResponse returned no taskId"}
	}
	return r, nil
}

// refusal is a plugin's {error:{code?, message, httpStatus?}}.
func refusal(e map[string]any) *ir.Error {
	status := http.StatusBadRequest
	if n, ok := manifest.Number(e["httpStatus"]); ok && n >= 400 && n <= 599 {
		status = int(n)
	}
	code := stringOf(e["code"])
	if code == "" {
		code = "upstream_refused"
	}
	msg, _ := e["message"].(string)
	if msg == "" {
		msg = "the upstream refused the task"
	}
	kind := ir.KindInvalidRequest
	if status >= 500 {
		kind = ir.KindUpstream
	}
	return &ir.Error{Status: status, Kind: kind, Code: code, Message: msg}
}

// accept parses a 2xx submit answer and persists the task. From here on the
// upstream holds the work, so nothing is retried.
func (s *Service) accept(ctx context.Context, sub *submission, t *Task, at *attempt, resp *upstreamResponse) (*Submitted, error) {
	l := sub.Plugin
	v, err := call(ctx, l, manifest.HookParseSubmitResponse, at.dctx, resp.value())
	if err != nil {
		return nil, hookError(502, "upstream_error", err, at.cr.secrets)
	}
	r, e := parseSubmitResult(v)
	if e != nil {
		e.Message = scrub(e.Message, at.cr.secrets...)
		return nil, e
	}
	data := resp.body
	if r.hasData {
		data = r.taskData
	}
	data = s.sanitize(ctx, pluginCaller{l}, data, t.PublicID)
	now := nowMS()
	t.UpstreamID, t.ChannelID, t.KeyIndex, t.UpstreamModel, t.Action = r.taskID, at.ch.ID, at.ch.KeyIndex, at.model, sub.Action
	t.Status, t.Progress = StatusSubmitted, ""
	t.SubmittedAt, t.CreatedAt, t.UpdatedAt = now, now, now
	t.NextPollAt, t.Deadline = now+s.opts.PollInterval.Milliseconds(), now+s.opts.Timeout.Milliseconds()
	t.Data = marshalData(data)
	if r.hasState {
		t.State = marshalData(r.state)
	}
	var imm *pollResult
	if r.immediate != nil {
		pr := normalizeResult(r.immediate)
		imm = &pr
		applyProgress(t, pr)
		t.Status = StatusSubmitted
		if progressing(pr.status) {
			t.Status = pr.status
		}
		if terminal(pr.status) {
			// Stored as submitted and finished right after, through the
			// same once-only path as a polled result; no poller takes it
			// in between.
			t.NextPollAt = t.Deadline
		}
	}
	if !t.RetainResult && (imm == nil || !terminal(imm.status)) {
		s.log.Warn("a retainResult:false route returned an asynchronous task; its result is retained", "plugin", l.Key, "task", t.PublicID)
		t.RetainResult = true
	}
	if err := s.store.Insert(ctx, t); err != nil {
		s.log.Error("task accepted upstream but not stored", "task", t.PublicID, "plugin", l.Key, "err", err)
		return nil, &ir.Error{Status: 500, Kind: ir.KindInternal, Code: "task_store_failed", Message: "the task was accepted upstream but could not be stored", Cause: err}
	}
	// From here the task row, not this process, owns the hold: the consume
	// row and the hand-over are one item, so the sweep after a crash
	// either finds the hold still this node's (and no row) or leaves it.
	row := s.usageLog(t, store.LogConsume, t.QuotaReserved, sub.LogExtra, sub.servedAttempts(at.ch))
	t.ticket.Keep(&row)
	out := &Submitted{Task: t, Data: data}
	if imm != nil && terminal(imm.status) {
		s.complete(ctx, l, t, *imm, data)
	}
	return out, nil
}
