package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// pollWorkers bounds concurrent per-task polls of one round, so a large
// backlog neither floods upstreams nor exhausts plugin runtime pools.
const pollWorkers = 8

// billingGrace is how long a terminal task may stay held before the
// recovery sweep bills it: long enough for the node that finished it.
const billingGrace = time.Minute

// Poller polls due tasks. All of its state is in the database, so a new
// process resumes where an old one stopped; a lease keeps two nodes from
// polling one task at once.
type Poller struct {
	s *Service
}

// Run polls every PollInterval until ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	t := time.NewTicker(p.s.opts.PollInterval)
	defer t.Stop()
	for {
		p.Tick(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick runs one round: bill terminal tasks left held by a crash, then poll
// every due task this node can lease.
func (p *Poller) Tick(ctx context.Context) {
	p.recover(ctx)
	now := nowMS()
	due, err := p.s.store.Due(ctx, now, p.s.opts.BatchSize)
	if err != nil {
		p.s.log.Error("task poller cannot list due tasks", "err", err)
		return
	}
	leaseUntil := now + (p.s.opts.UpstreamTimeout + 30*time.Second).Milliseconds()
	var single []*Task
	batches := map[string][]*Task{}
	for _, t := range due {
		ok, err := p.s.store.Lease(ctx, t.ID, p.s.opts.Node, now, leaseUntil)
		if err != nil || !ok {
			continue
		}
		t.LeaseOwner, t.LeaseUntil = p.s.opts.Node, leaseUntil
		l, found := p.s.PluginFor(ctx, t)
		switch {
		case found && l.Manifest.FetchMode == manifest.FetchBatch:
			key := fmt.Sprintf("%s\x00%s\x00%d", l.Key, l.Version, t.ChannelID)
			batches[key] = append(batches[key], t)
		default:
			single = append(single, t)
		}
	}
	p.runAll(ctx, single, batches)
}

func (p *Poller) runAll(ctx context.Context, single []*Task, batches map[string][]*Task) {
	sem := make(chan struct{}, pollWorkers)
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f()
		}()
	}
	for _, t := range single {
		run(func() { p.pollOne(ctx, t) })
	}
	for _, ts := range batches {
		run(func() { p.pollBatch(ctx, ts) })
	}
	wg.Wait()
}

// recover bills terminal tasks whose billing is still held: the node that
// finished them stopped between storing the outcome and moving quota.
func (p *Poller) recover(ctx context.Context) {
	ts, err := p.s.store.Unbilled(ctx, nowMS()-billingGrace.Milliseconds(), p.s.opts.BatchSize)
	if err != nil {
		p.s.log.Error("task poller cannot list unbilled tasks", "err", err)
		return
	}
	for _, t := range ts {
		p.s.bill(ctx, t, t.QuotaReserved)
	}
}

// polled is the shared state of one poll of one task.
type polled struct {
	t  *Task
	l  *plugin.Loaded
	ch *store.Channel
	cr credentials
}

// resolve finds the plugin, channel and credentials of a task; a failure is
// a counted poll failure (the task cannot be asked about right now).
func (p *Poller) resolve(ctx context.Context, t *Task) (*polled, string) {
	l, ok := p.s.PluginFor(ctx, t)
	if !ok {
		return nil, "the task's plugin is not loaded"
	}
	ch, err := p.s.channel(ctx, t)
	if err != nil {
		return nil, "the task's channel or its key is gone"
	}
	cr, err := p.s.credentialsFor(ctx, ch, l)
	if err != nil {
		return nil, "the channel's credentials cannot be used"
	}
	return &polled{t: t, l: l, ch: ch, cr: cr}, ""
}

// channel is t's channel holding only the key t was submitted with: the
// upstream task belongs to that key's account, and a request about it
// must not carry the channel's other keys. A key no longer in the list is
// an error, not another key.
func (s *Service) channel(ctx context.Context, t *Task) (*store.Channel, error) {
	c := s.d.Router.Table().Channel(t.ChannelID)
	if c == nil {
		sc, err := s.d.Store.Channels().Get(ctx, t.ChannelID)
		if err != nil {
			return nil, err
		}
		c = &routing.Channel{Channel: *sc}
	}
	if t.KeyIndex < 0 || t.KeyIndex >= c.KeyCount() {
		return nil, errKeyGone
	}
	return &c.WithKey(t.KeyIndex).Channel, nil
}

var errKeyGone = errors.New("the key the task was submitted with is no longer in its channel's list")

// expired ends a task past its outer deadline.
func (p *Poller) expired(ctx context.Context, t *Task, l *plugin.Loaded) bool {
	if t.Deadline == 0 || nowMS() < t.Deadline {
		return false
	}
	p.s.complete(ctx, l, t, pollResult{status: StatusFailure, reason: "the task timed out"}, nil)
	return true
}

func (p *Poller) pollOne(ctx context.Context, t *Task) {
	pl, why := p.resolve(ctx, t)
	if pl == nil {
		if !p.expiredWithout(ctx, t) {
			p.count(ctx, nil, t, why)
		}
		return
	}
	if p.expired(ctx, t, pl.l) {
		return
	}
	qctx := queryContext(t, pl.ch, pl.l, pl.cr)
	resp, why := p.s.query(ctx, pl, manifest.HookBuildQueryRequest, qctx)
	if resp == nil {
		p.count(ctx, pl, t, why)
		return
	}
	o, parse, why := pollHTTP(resp.status)
	var r pollResult
	if parse {
		v, err := call(ctx, pl.l, manifest.HookParseTaskResult, qctx, resp.body, resp.httpInfo())
		r = normalizeResult(v)
		o, why = pollParsed(resp.status, r, err)
	}
	if resp.status == 401 || resp.status == 403 {
		p.s.log.Warn("task poll refused by the upstream; check the channel's key", "channel", t.ChannelID, "status", resp.status)
	}
	snapshot := resp.body
	if r.hasData {
		snapshot = r.data
	}
	snapshot = p.s.sanitize(ctx, pluginCaller{pl.l}, snapshot, t.PublicID)
	p.apply(ctx, pl, t, o, r, snapshot, why)
}

// expiredWithout ends a past-deadline task whose plugin or channel is gone.
func (p *Poller) expiredWithout(ctx context.Context, t *Task) bool {
	if t.Deadline == 0 || nowMS() < t.Deadline {
		return false
	}
	p.s.completeWithout(ctx, t, "the task timed out")
	return true
}

// query builds a query descriptor with hook, validates and sends it. A nil
// response comes with the reason the poll counts as failed.
func (s *Service) query(ctx context.Context, pl *polled, hook string, args ...any) (*upstreamResponse, string) {
	v, err := call(ctx, pl.l, hook, args...)
	if err != nil {
		return nil, "the plugin could not build the query: " + hookMessage(err, pl.cr.secrets)
	}
	d, err := egress.ParseDescriptor(v, egress.Policy{Channel: parseBase(channelBase(pl.ch, pl.l)), Allowed: pl.l.Manifest.AllowedHosts})
	if err != nil {
		return nil, scrub(err.Error(), pl.cr.secrets...)
	}
	resp, err := s.send(ctx, d, nil)
	if err != nil {
		return nil, scrub(err.Error(), pl.cr.secrets...)
	}
	s.reportPoll(pl.ch.ID, pl.t.KeyIndex, resp)
	return resp, ""
}

// reportPoll tells channel health how a poll's answer went, judged like
// every sender's (a refused key is disabled, a throttle cools it): a poll
// is the channel's key at work too. What the answer means for the task is
// the poll outcome's business (pollHTTP). The key judged is the one the
// task was submitted with, the one its polls use.
func (s *Service) reportPoll(id int64, keyIndex int, resp *upstreamResponse) {
	ch := s.d.Router.Table().Channel(id)
	if ch == nil || keyIndex >= ch.KeyCount() {
		return
	}
	if resp.status/100 == 2 {
		s.d.Router.Health.SucceededKey(ch, keyIndex)
		return
	}
	s.d.Router.Health.Report(ch, keyIndex, upstream.StatusError(resp.status, resp.headers, &ir.Error{Status: resp.status,
		Kind: ir.KindUpstream, Code: "upstream_error", Message: fmt.Sprintf("the upstream answered a task poll with HTTP %d", resp.status)}))
}

// apply carries out one task's poll outcome.
func (p *Poller) apply(ctx context.Context, pl *polled, t *Task, o pollOutcome, r pollResult, snapshot any, why string) {
	switch o {
	case outcomeTerminal:
		p.s.complete(ctx, pl.l, t, r, snapshot)
	case outcomeGone:
		p.s.complete(ctx, pl.l, t, pollResult{status: StatusFailure, reason: why}, nil)
	case outcomeCounted:
		p.count(ctx, pl, t, why)
	default:
		applyProgress(t, r)
		now := nowMS()
		if t.Status == StatusInProgress && t.StartedAt == 0 {
			t.StartedAt = now
		}
		t.PollFailures, t.UpdatedAt, t.NextPollAt = 0, now, now+p.s.opts.PollInterval.Milliseconds()
		t.Data = marshalData(snapshot)
		if _, err := p.s.store.Progress(ctx, t, p.s.opts.Node); err != nil {
			p.s.log.Error("task progress not stored", "task", t.PublicID, "err", err)
		}
	}
}

// count records a failed poll; at MaxFailures in a row the task fails and
// is refunded.
func (p *Poller) count(ctx context.Context, pl *polled, t *Task, why string) {
	t.PollFailures++
	if t.PollFailures >= p.s.opts.MaxFailures {
		reason := fmt.Sprintf("polling failed %d times in a row: %s", t.PollFailures, why)
		if pl != nil {
			p.s.complete(ctx, pl.l, t, pollResult{status: StatusFailure, reason: reason}, nil)
		} else {
			p.s.completeWithout(ctx, t, reason)
		}
		return
	}
	now := nowMS()
	snap := *t
	snap.Data, snap.State = nil, nil
	snap.UpdatedAt, snap.NextPollAt = now, now+p.s.opts.PollInterval.Milliseconds()
	if _, err := p.s.store.Progress(ctx, &snap, p.s.opts.Node); err != nil {
		p.s.log.Error("task poll failure not stored", "task", t.PublicID, "err", err)
	}
}

// completeWithout fails a task whose plugin is not loaded: no hook can run,
// but the outcome and refund still must happen.
func (s *Service) completeWithout(ctx context.Context, t *Task, reason string) {
	t.Status, t.FailReason = StatusFailure, reason
	now := nowMS()
	t.FinishedAt, t.UpdatedAt = now, now
	won, err := s.store.Finish(ctx, t, false)
	if err != nil || !won {
		if err != nil {
			s.log.Error("task outcome not stored", "task", t.PublicID, "err", err)
		}
		return
	}
	s.bill(ctx, t, 0)
}
