package task

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/routing"
)

// submitAffinity is a submission's cache affinity (CONTRACT §14), as a
// chat call has it: the session's pin, looked up before the plan and
// written once a key accepted the task.
type submitAffinity struct {
	session routing.Session
	ttl     time.Duration
	pinned  bool
	pin     routing.Pin
	// first is the pinned key as an attempt uses it, when healthy and
	// able to run the submission: tried before the plan.
	first *routing.Channel
}

// pinnedKey is the pinned key tried before the plan, nil for none.
func (a *submitAffinity) pinnedKey() *routing.Channel {
	if a == nil {
		return nil
	}
	return a.first
}

// sessionSources are the submission's explicit session ids: the
// X-Turnpike-Session header, and the body's prompt_cache_key,
// metadata.user_id or user. A task has no prompt prefix to stand for a
// session, so a submission naming none is routed without affinity.
func (sub *submission) sessionSources() routing.SessionSources {
	src := routing.SessionSources{}
	src.Header, _ = sub.Headers["X-Turnpike-Session"].(string)
	body, _ := sub.Body.(map[string]any)
	src.PromptCacheKey, _ = body["prompt_cache_key"].(string)
	if md, ok := body["metadata"].(map[string]any); ok {
		src.MetadataUserID, _ = md["user_id"].(string)
	}
	src.User, _ = body["user"].(string)
	return src
}

// lookupPin finds the submission's pin when its model has affinity on and
// it names a session. The session is its user's: two users naming the
// same id never share a pin. A pin store that fails costs the submission
// its pin, never the submission.
func (s *Service) lookupPin(ctx context.Context, sub *submission, keep func(*routing.Channel) bool) *submitAffinity {
	pins := s.d.Router.Pins
	if pins == nil || sub.price == nil {
		return nil
	}
	ttl := routing.AffinityOf(&sub.price.Raw)
	src := sub.sessionSources()
	if id, _ := src.First(); ttl <= 0 || id == "" {
		return nil
	}
	a := &submitAffinity{session: routing.SessionKey(sub.Principal.UserID, sub.Principal.Group, sub.Model, src, nil), ttl: ttl}
	pin, ok, err := pins.Get(ctx, a.session, ttl)
	if err != nil {
		s.log.WarnContext(ctx, "cache affinity pin store failed; routing without pins", "op", "read", "err", err)
		return a
	}
	if !ok {
		return a
	}
	a.pinned, a.pin = true, pin
	o := s.planOptions(sub.Principal.Group, sub.Model, 0, keep)
	if ch, ok := sub.Table.Pinned(s.d.Router.Health, o, pin); ok {
		a.first = ch
	}
	return a
}

// servedBy pins the session to the key that accepted the submission (a
// pin that served was renewed by its lookup).
func (s *Service) servedBy(ctx context.Context, a *submitAffinity, ch *routing.Channel) {
	if a == nil || (a.pinned && a.pin.ChannelID == ch.ID && a.pin.KeyIndex == ch.KeyIndex) {
		return
	}
	err := s.d.Router.Pins.Set(context.WithoutCancel(ctx), a.session, routing.Pin{ChannelID: ch.ID, KeyIndex: ch.KeyIndex}, a.ttl)
	if err != nil {
		s.log.WarnContext(ctx, "cache affinity pin store failed; routing without pins", "op", "write", "err", err)
	}
}

// planOptions is the routing question for a submission of model, as
// every sender asks it: the model's strategy (routing.OptionsFor).
func (s *Service) planOptions(group, model string, n int, keep func(*routing.Channel) bool) routing.PlanOptions {
	o := routing.PlanOptions{Group: group, Model: model, Max: n, Filter: keep}
	if p, err := s.d.Billing.Price(model); err == nil {
		o = routing.OptionsFor(o, &p.Raw)
	}
	return o
}
