package routing

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Health states of a channel key (CONTRACT §10). Disabled is the channel's
// own status field, set by an administrator; nothing here changes it.
const (
	StateHealthy      = "healthy"
	StateCooling      = "cooling"
	StateAutoDisabled = "auto_disabled"
	StateDisabled     = "disabled"
)

// HealthKey names one key of a channel; single-key channels use index 0.
type HealthKey struct {
	ChannelID int64
	KeyIndex  int
}

// HealthEvent is one state transition, reported to Health.OnChange by the
// one node that made it (channel_down / channel_up webhooks).
type HealthEvent struct {
	ChannelID   int64
	ChannelName string
	KeyIndex    int
	// State is the new state; Up is true when it is healthy again.
	State  string
	Reason string
	Up     bool
	At     time.Time
}

// Health is the state machine of channel health: healthy → cooling after
// failure_threshold consecutive failures or at once after a 429 (the
// cool-down doubles while failures continue), → auto_disabled after a
// refused credential or account (only a successful probe brings it back).
//
// Records are shared through a store: a node changes one only by a
// compare-and-swap on its version, so every transition is made (and
// reported to OnChange) by exactly one node, and Sync brings the others'
// transitions in. Consecutive-failure counts stay per node. Routing reads
// an atomic pointer per key and takes no lock.
type Health struct {
	store  store.HealthRepo
	log    *slog.Logger
	clock  atomic.Pointer[func() time.Time]
	lookup atomic.Pointer[func(int64) *Channel]
	m      sync.Map // HealthKey → *entry
	// onChange is told of every transition this node makes (SetOnChange).
	onChange atomic.Pointer[func(HealthEvent)]
	// Probe sends one request that fits what the channel serves; nil
	// disables probing.
	Probe func(ctx context.Context, ch *Channel, keyIndex int) error
}

type entry struct {
	rec      atomic.Pointer[store.ChannelHealth] // nil: healthy, never recorded
	failures atomic.Int32
	probing  atomic.Bool
	// changed is when this node last changed the record (monotonic
	// nanoseconds since start), so a Sync that read the store before that
	// does not put the older record back.
	changed atomic.Int64
	// lost is when the last lost connection counted against the key
	// (monotonic, as changed); see sameLoss.
	lost atomic.Int64
	mu   sync.Mutex // one transition of this key at a time on this node
}

// sameLoss reports a lost connection that belongs to one already counted
// against the key: the failed attempt was sent before that loss was
// counted, so it was in flight on the connection (or one lost with it) —
// an HTTP/2 connection that goes takes every call it carries, and that is
// one failure of the channel, not one per call. Otherwise the loss is
// counted from now.
func (en *entry) sameLoss(sent time.Time) bool {
	at := int64(sent.Sub(started))
	for {
		last := en.lost.Load()
		if last != 0 && at < last {
			return true
		}
		if en.lost.CompareAndSwap(last, monotonic()) {
			return false
		}
	}
}

// started anchors the monotonic clock of entry.changed.
var started = time.Now()

func monotonic() int64 { return int64(time.Since(started)) }

// NewHealth returns a health tracker. repo, when not nil, shares the
// records with every node using the same database.
func NewHealth(repo store.HealthRepo, log *slog.Logger) *Health {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Health{store: repo, log: log}
	h.SetClock(time.Now)
	return h
}

// SetOnChange installs the observer of transitions: it is called once per
// transition cluster-wide, on the node that made it, synchronously on the
// path that made it (an upstream attempt, a probe, an admin request), so
// it must not block. The alert notifier sends channel_down / channel_up
// from it.
func (h *Health) SetOnChange(f func(HealthEvent)) { h.onChange.Store(&f) }

// SetClock replaces the clock (tests).
func (h *Health) SetClock(now func() time.Time) { h.clock.Store(&now) }

func (h *Health) now() time.Time { return (*h.clock.Load())() }

// channel finds a channel of the current snapshot by id; one not (yet) in
// it is judged by the default policy.
func (h *Health) channel(id int64) *Channel {
	if f := h.lookup.Load(); f != nil {
		if ch := (*f)(id); ch != nil {
			return ch
		}
	}
	return &Channel{Channel: store.Channel{ID: id}, Policy: DefaultPolicy()}
}

func (h *Health) get(k HealthKey) *entry {
	if v, ok := h.m.Load(k); ok {
		return v.(*entry)
	}
	v, _ := h.m.LoadOrStore(k, &entry{})
	return v.(*entry)
}

// Routable reports whether routing may use the key now: healthy, or cooling
// whose cool-down has passed (the next failure cools it again, doubled).
func (h *Health) Routable(id int64, key int) bool {
	v, ok := h.m.Load(HealthKey{id, key})
	if !ok {
		return true
	}
	rec := v.(*entry).rec.Load()
	switch {
	case rec == nil || rec.State == StateHealthy:
		return true
	case rec.State == StateCooling:
		return !h.now().Before(rec.Until)
	}
	return false
}

// verdict is what one failure means for the channel.
type verdict int

const (
	stop      verdict = iota // the client's problem: answer it
	next                     // try another channel, nothing learnt
	failure                  // a failure towards the threshold
	throttled                // 429: cool down at once
	refused                  // credentials or account refused: auto-disable
)

// judge classifies a failed attempt under the channel's policy. Statuses
// the upstream answered are judged by the policy's lists; failures the
// gateway made itself (timeouts, resets, unusable addresses) always move on.
func judge(p *Policy, e *ir.Error) (verdict, bool) {
	if e.UpstreamStatus == 0 {
		switch {
		case e.Retry == ir.RetryNextAndCool:
			return refused, true
		case e.Retry == ir.RetryNext && e.Status >= 500:
			return failure, true
		case e.Retry == ir.RetryNext:
			// A refusal to convert the request for this channel's format
			// is not the channel's fault.
			return next, true
		}
		return stop, false
	}
	s := e.UpstreamStatus
	switch {
	case p.Disables(s) || e.Retry == ir.RetryNextAndCool || saysAccountRefused(e):
		return refused, true
	case s == 429:
		return throttled, p.Retries(s)
	case s >= 500 || s == 408:
		return failure, p.Retries(s)
	}
	return stop, p.Retries(s)
}

// MovesOn is the judgement Report makes of a failure, without recording
// it: whether the attempt loop moves on to another channel (or key). A
// sender that words its error by that answer (a task submit: 502 for a
// channel's trouble, the upstream's own status for the request's) asks it
// before reporting the failure.
func (p *Policy) MovesOn(e *ir.Error) bool {
	_, moveOn := judge(p, e)
	return moveOn
}

// saysAccountRefused recognises an upstream error whose structured code or
// type says the balance or the key is invalid under a status that does not
// (OpenAI answers an empty balance with 429 insufficient_quota). Only those
// fields count, never the message: a 400 may echo the client's own input
// ("encoding_format":"invalid api key"), and any key holder could then
// take a channel out of service by sending that text.
func saysAccountRefused(e *ir.Error) bool {
	switch strings.ToLower(e.Code) {
	case "insufficient_quota", "invalid_api_key", "api_key_invalid", "account_deactivated",
		"billing_not_active", "billing_hard_limit_reached", "insufficient_balance":
		return true
	}
	// The OpenAI decoder sets this kind only from the error's type or code
	// field on a 429, never from its message.
	return e.UpstreamStatus == 429 && e.Kind == ir.KindQuota
}

// Report feeds one failed attempt into the key's state and tells the
// attempt loop whether to move on to the next channel.
func (h *Health) Report(ch *Channel, key int, e *ir.Error) bool {
	v, moveOn := judge(&ch.Policy, e)
	reason := reasonOf(ch, e)
	switch v {
	case refused:
		h.transition(ch, key, func(cur *store.ChannelHealth, now time.Time) *store.ChannelHealth {
			if cur != nil && cur.State == StateAutoDisabled {
				return nil
			}
			return &store.ChannelHealth{State: StateAutoDisabled, Reason: reason, Since: now,
				NextProbe: now.Add(ch.Policy.ProbeInterval)}
		})
	case throttled:
		h.coolKey(ch, key, reason, e.RetryAfter)
	case failure:
		en := h.get(HealthKey{ch.ID, key})
		if !e.SentAt.IsZero() && en.sameLoss(e.SentAt) {
			return moveOn
		}
		n := en.failures.Add(1)
		cur := en.rec.Load()
		probation := cur != nil && cur.State == StateCooling
		if probation || int(n) >= ch.Policy.FailureThreshold {
			h.coolKey(ch, key, reason, 0)
		}
	}
	return moveOn
}

// coolKey takes the key out for retryAfter (a 429's Retry-After) or the
// cool-down, doubled from the last one while the key has not recovered. A
// key already cooling is left alone: attempts that were in flight when it
// cooled would otherwise double it at once.
func (h *Health) coolKey(ch *Channel, key int, reason string, retryAfter time.Duration) {
	p := ch.Policy
	h.transition(ch, key, func(cur *store.ChannelHealth, now time.Time) *store.ChannelHealth {
		d := p.Cooldown
		if cur != nil {
			switch cur.State {
			case StateAutoDisabled:
				return nil
			case StateCooling:
				if now.Before(cur.Until) {
					return nil
				}
				d = min(max(cur.Cooldown*2, p.Cooldown), p.MaxCooldown)
			}
		}
		if retryAfter > 0 {
			d = min(retryAfter, p.MaxCooldown)
		}
		since := now
		if cur != nil && cur.State == StateCooling {
			since = cur.Since // one outage, however many cool-downs
		}
		return &store.ChannelHealth{State: StateCooling, Reason: reason, Since: since, Until: now.Add(d), Cooldown: d}
	})
	h.get(HealthKey{ch.ID, key}).failures.Store(0)
}

// CoolDown takes key 0 of a channel known by id out of routing for its
// cool-down at once, as a 429 without Retry-After would.
func (h *Health) CoolDown(id int64, reason string) {
	h.coolKey(h.channel(id), 0, reason, 0)
}

// SucceededKey records an answer from the key: the failure count restarts
// and a cooling key is healthy again. An auto-disabled key stays so: only
// a probe brings it back.
func (h *Health) SucceededKey(ch *Channel, key int) {
	v, ok := h.m.Load(HealthKey{ch.ID, key})
	if !ok {
		return
	}
	en := v.(*entry)
	en.failures.Store(0)
	if rec := en.rec.Load(); rec == nil || rec.State != StateCooling {
		return
	}
	h.transition(ch, key, func(cur *store.ChannelHealth, now time.Time) *store.ChannelHealth {
		if cur == nil || cur.State != StateCooling {
			return nil
		}
		return &store.ChannelHealth{State: StateHealthy, Reason: "answered again", Since: now}
	})
}

// Succeeded is SucceededKey for key 0 of a channel known by id.
func (h *Health) Succeeded(id int64) {
	if _, ok := h.m.Load(HealthKey{id, 0}); !ok {
		return // the hot path: nothing was ever recorded
	}
	h.SucceededKey(h.channel(id), 0)
}

// Failed counts a failure of the gateway's own making towards the
// threshold for key 0 of a channel known by id (the task driver's submit
// that timed out or answered 5xx).
func (h *Health) Failed(id int64, reason string) {
	h.Report(h.channel(id), 0, &ir.Error{Status: 502, Message: reason, Retry: ir.RetryNext})
}

// reasonOf is the state's reason: the upstream's status and message, with
// the channel's keys masked in case the provider echoed one.
func reasonOf(ch *Channel, e *ir.Error) string {
	r := e.Message
	if e.UpstreamStatus > 0 {
		r = fmt.Sprintf("%d: %s", e.UpstreamStatus, r)
	}
	r = ch.Redact(r)
	if len(r) > 300 {
		r = r[:300]
	}
	return r
}
