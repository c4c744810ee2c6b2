package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
)

// SSE submit limits beside the delta ones.
const (
	maxSSEEventBytes   = 1 << 20
	maxSSEControlBytes = 64 << 10
)

// errSSEIdle is the cause of a stream cancelled for silence.
var errSSEIdle = errors.New("the upstream stream was silent for too long")

// exchangeSSE sends a descriptor with responseType "sse" and reads the
// event stream through the plugin's event hook. Before 2xx headers arrive a
// failure may move to the next channel; after, the upstream holds the work
// and every failure ends the submission. No event reaches the client.
func (s *Service) exchangeSSE(ctx context.Context, sub *submission, t *Task, at *attempt, d *egress.Descriptor) (*Submitted, error) {
	l := sub.Plugin
	if !slices.Contains(l.Manifest.SubmitResponseTypes, "sse") {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "invalid_plugin_request",
			Message: `the plugin asked for an SSE submit answer but meta.submitResponseTypes does not include "sse"`}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := d.Request(ctx, egress.NewBudget(sub.Resolver, s.opts.MaxFileBytes))
	if err != nil {
		return nil, hookError(400, "invalid_request", err, at.cr.secrets)
	}
	req.Header.Set("Accept", "text/event-stream")
	headerTimer := time.AfterFunc(s.opts.UpstreamTimeout, func() { cancel(errors.New("no answer headers in time")) })
	resp, err := s.client.Do(req)
	headerTimer.Stop()
	if err != nil {
		return nil, s.transportFailure(ctx, at, err, fmt.Sprintf("upstream %s unreachable", egress.HostPort(d.URL)))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody))
		out := &upstreamResponse{status: resp.StatusCode, headers: resp.Header, raw: raw, body: string(raw)}
		if v, err := DecodeJSON(raw); err == nil {
			out.body = v
		}
		return nil, s.submitError(ctx, pluginCaller{l}, at, out)
	}
	body, err := s.readSubmitStream(ctx, cancel, l, at, resp.Body)
	if err != nil {
		e := &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_stream_failed",
			Message: scrub("the upstream's submit stream failed: "+err.Error(), at.cr.secrets...), Retry: ir.RetryNever}
		s.log.Warn("task SSE submit failed after acceptance", "plugin", l.Key, "channel", at.ch.ID, "err", e.Message)
		return nil, e
	}
	if d.Action != "" {
		sub.Action = d.Action
	}
	raw, _ := json.Marshal(body)
	return s.accept(ctx, sub, t, at, &upstreamResponse{status: resp.StatusCode, headers: resp.Header, raw: raw, body: body})
}

// readSubmitStream runs the events through parseSubmitEvent (snapshot) or
// parseSubmitEventDelta (with submit-sse-delta@1) until one says done, and
// returns the final body.
func (s *Service) readSubmitStream(ctx context.Context, cancel context.CancelCauseFunc, l *plugin.Loaded, at *attempt, body io.Reader) (any, error) {
	idle := newIdleReader(body, s.opts.SubmitStreamIdle, func() { cancel(errSSEIdle) })
	defer idle.stop()
	r := sse.NewReader(idle, maxSSEEventBytes)
	var st sseStep
	if l.Manifest.HasCapability(manifest.CapabilitySubmitSSEDelta) && l.Manifest.Hooks.Has(manifest.HookParseSubmitEventDelta) {
		st = &deltaStep{doc: &deltaDoc{}}
	} else {
		st = &snapshotStep{}
	}
	for {
		ev, err := r.Next()
		if err != nil {
			return nil, streamError(ctx, err, s.opts.SubmitStreamIdle)
		}
		event := map[string]any{"event": sseEventName(ev.Name), "id": string(ev.ID), "data": string(ev.Data)}
		done, err := st.step(ctx, l, at, event)
		if err != nil {
			return nil, err
		}
		// Time in the hook is not upstream silence.
		idle.touch()
		if done {
			return st.result(), nil
		}
	}
}

func sseEventName(b []byte) string {
	if len(b) == 0 {
		return "message"
	}
	return string(b)
}

// streamError words a framing or transport failure of a stream that may
// stay silent for idle.
func streamError(ctx context.Context, err error, idle time.Duration) error {
	switch {
	case errors.Is(context.Cause(ctx), errSSEIdle):
		return fmt.Errorf("no event for %s", idle)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the stream ended before the plugin reported done")
	case errors.Is(err, sse.ErrEventTooLarge):
		return fmt.Errorf("an event is larger than %d bytes", maxSSEEventBytes)
	}
	return errors.New("reading the stream failed")
}

// sseStep is one mode of reading a submit stream.
type sseStep interface {
	step(ctx context.Context, l *plugin.Loaded, at *attempt, event map[string]any) (done bool, err error)
	result() any
}

// snapshotStep: every event returns the whole state; the last is the body.
type snapshotStep struct {
	state any
}

func (s *snapshotStep) step(ctx context.Context, l *plugin.Loaded, at *attempt, event map[string]any) (bool, error) {
	v, err := call(ctx, l, manifest.HookParseSubmitEvent, at.dctx, event, s.state)
	if err != nil {
		return false, errors.New("parseSubmitEvent failed: " + hookMessage(err, at.cr.secrets))
	}
	m, ok := v.(map[string]any)
	if !ok || m["state"] == nil {
		return false, errors.New("parseSubmitEvent must return {state, done} with a non-null state")
	}
	if n, err := encodedSize(m["state"]); err != nil || n > maxSSEResultBytes {
		return false, fmt.Errorf("parseSubmitEvent returned a state larger than %d bytes", maxSSEResultBytes)
	}
	s.state = m["state"]
	done, _ := m["done"].(bool)
	return done, nil
}

func (s *snapshotStep) result() any { return s.state }

// deltaStep: events return changes to a host-held result plus a small
// control state that the next event sees.
type deltaStep struct {
	doc     *deltaDoc
	control any
}

func (s *deltaStep) step(ctx context.Context, l *plugin.Loaded, at *attempt, event map[string]any) (bool, error) {
	v, err := call(ctx, l, manifest.HookParseSubmitEventDelta, at.dctx, event, s.control)
	if err != nil {
		return false, errors.New("parseSubmitEventDelta failed: " + hookMessage(err, at.cr.secrets))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false, errors.New("parseSubmitEventDelta must return {changes, state, done}")
	}
	changes, err := parseChanges(m["changes"])
	if err != nil {
		return false, errors.New("parseSubmitEventDelta: " + err.Error())
	}
	if n, err := encodedSize(m["state"]); err != nil || n > maxSSEControlBytes {
		return false, fmt.Errorf("parseSubmitEventDelta returned a control state larger than %d bytes", maxSSEControlBytes)
	}
	for i, c := range changes {
		if err := s.doc.apply(c); err != nil {
			return false, fmt.Errorf("parseSubmitEventDelta: changes[%d]: %v", i, err)
		}
	}
	s.control = m["state"]
	done, _ := m["done"].(bool)
	return done, nil
}

func (s *deltaStep) result() any { return s.doc.root }

func encodedSize(v any) (int, error) {
	b, err := json.Marshal(v)
	return len(b), err
}

// idleReader calls onIdle when no bytes arrive for the limit; each read
// that returns data rearms it.
type idleReader struct {
	r     io.Reader
	limit time.Duration
	mu    sync.Mutex
	timer *time.Timer
}

func newIdleReader(r io.Reader, limit time.Duration, onIdle func()) *idleReader {
	return &idleReader{r: r, limit: limit, timer: time.AfterFunc(limit, onIdle)}
}

func (i *idleReader) Read(p []byte) (int, error) {
	n, err := i.r.Read(p)
	if n > 0 {
		i.touch()
	}
	return n, err
}

func (i *idleReader) touch() {
	i.mu.Lock()
	i.timer.Reset(i.limit)
	i.mu.Unlock()
}

func (i *idleReader) stop() {
	i.mu.Lock()
	i.timer.Stop()
	i.mu.Unlock()
}
