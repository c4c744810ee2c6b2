package task

import (
	"context"
	"errors"
	"time"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// ErrWaitTimeout ends an in-request wait that reached its deadline; the
// task itself goes on in background polling.
var ErrWaitTimeout = errors.New("the task did not finish within the protocol timeout")

// Await waits inside a client request for t to end, polling it through the
// ordinary query hooks (with the poller's lease, outcomes and billing) when
// it is due, and re-reading it otherwise. after, when set, runs after each
// round and may end the wait early by returning true. The wait ends with
// the task's latest stored state, ErrWaitTimeout at the deadline, or the
// request's error when the client goes away: the task is then left to the
// background poller.
func (s *Service) Await(ctx context.Context, t *Task, deadline time.Time, after func(*Task) bool) (*Task, error) {
	// Polls run detached from the request, so a client that disconnects in
	// the middle of one never turns into a counted poll failure.
	bg := context.WithoutCancel(ctx)
	for !terminal(t.Status) {
		if !time.Now().Before(deadline) {
			return t, ErrWaitTimeout
		}
		timer := time.NewTimer(min(s.nextWait(t), time.Until(deadline)))
		select {
		case <-ctx.Done():
			timer.Stop()
			return t, ctx.Err()
		case <-timer.C:
		}
		s.pollNow(bg, t)
		if fresh, err := s.store.Get(bg, t.ID); err == nil {
			t = fresh
		}
		if after != nil && after(t) {
			return t, nil
		}
	}
	return t, nil
}

// nextWait is how long to sleep before the task is due again: never longer
// than the poll interval (another node may finish the task), never so
// short that a task leased elsewhere makes the wait spin.
func (s *Service) nextWait(t *Task) time.Duration {
	iv := s.opts.PollInterval
	d := time.Until(time.UnixMilli(t.NextPollAt))
	return min(max(d, iv/10, time.Millisecond), iv)
}

// pollNow polls a due task once when this node can lease it. A task leased
// by another poller is left to it.
func (s *Service) pollNow(ctx context.Context, t *Task) {
	now := nowMS()
	if t.NextPollAt > now {
		return
	}
	until := now + (s.opts.UpstreamTimeout + 30*time.Second).Milliseconds()
	won, err := s.store.Lease(ctx, t.ID, s.opts.Node, now, until)
	if err != nil || !won {
		return
	}
	lt := *t
	lt.LeaseOwner, lt.LeaseUntil = s.opts.Node, until
	if l, ok := s.PluginFor(ctx, &lt); ok && l.Manifest.FetchMode == manifest.FetchBatch {
		s.poller.pollBatch(ctx, []*Task{&lt})
		return
	}
	s.poller.pollOne(ctx, &lt)
}
