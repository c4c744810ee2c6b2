package routing

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Attempts is the retry rule every surface shares, chat calls and task
// submits alike. Each failure is judged by channel health under the
// channel's policy (retry_statuses move on, disable_statuses auto-disable
// and move on, timeouts and resets move on and count towards cooling); any
// other failure goes back to the client; and once a byte reached the
// client or the client left, no further attempt.
//
// Each attempt uses one key of the channel (PickKey). A failure that took
// that key out (refused, or cooled by a 429) leaves the channel's other
// keys usable, so the same channel is tried again with another key, up to
// RetryCount further keys, before the plan moves on.
type Attempts struct {
	Health     *Health
	RetryCount int
	// Pin, when set, is a channel with one key (Table.Pinned) tried first,
	// with that key, before the plan: a session's pinned key. Its failure
	// is judged like any other and moves on to the plan.
	Pin *Channel
}

// Try runs attempt on the plan's channels under the rule. wrote reports
// that the answer reached the client (nil: never); judged, when set, hears
// each failed attempt once health judged it, moveOn telling whether the
// loop goes on (metrics, logs). Neither is kept, so closures passed here
// stay on the caller's stack.
//
// It returns nil once an attempt served; otherwise the failure, with
// exhausted set when every planned channel failed before the first byte
// (last is then the last failure, nil when no channel had a usable key),
// so a fallback may be tried.
func (a Attempts) Try(ctx context.Context, plan []*Channel, wrote func() bool, attempt func(*Channel) error,
	judged func(ch *Channel, e *ir.Error, moveOn bool)) (last *ir.Error, exhausted bool) {
	// one runs an attempt on ch and judges its failure; goOn is false when
	// the call is over (served, or failed for the client to see).
	one := func(ch *Channel) (e *ir.Error, goOn bool) {
		err := attempt(ch)
		if err == nil {
			return nil, false
		}
		e = ir.As(err)
		// A provider may echo the key it refused: never pass it on to
		// the log, the usage row or the client.
		e.Message = ch.Redact(e.Message)
		if (wrote != nil && wrote()) || ctx.Err() != nil {
			return e, false
		}
		moveOn := a.Health.Report(ch, ch.KeyIndex, e)
		if judged != nil {
			judged(ch, e, moveOn)
		}
		return e, moveOn
	}
	if a.Pin != nil && a.Health.Routable(a.Pin.ID, a.Pin.KeyIndex) {
		e, goOn := one(a.Pin)
		if !goOn {
			return e, false
		}
		last = e
	}
	for _, planned := range plan {
		for tries := 0; ; tries++ {
			ch, ok := a.Health.Pick(planned)
			if !ok {
				break // every key went out since the plan was made
			}
			e, goOn := one(ch)
			if !goOn {
				return e, false
			}
			last = e
			if tries >= a.RetryCount || ch.KeyCount() < 2 || a.Health.Routable(ch.ID, ch.KeyIndex) {
				break
			}
		}
	}
	return last, true
}

// Pick is the channel as one attempt uses it: with one of its usable keys
// alone in Key and its index in KeyIndex, so the attempt sends that key
// and health hears about that key.
func (h *Health) Pick(ch *Channel) (*Channel, bool) {
	i, _, ok := ch.PickKey(h)
	if !ok {
		return nil, false
	}
	return ch.WithKey(i), true
}
