package relay

import (
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/routing"
)

// affinity is a call's cache affinity (CONTRACT §14): the session's pin,
// looked up before the plan and written once a key answered.
type affinity struct {
	// on: the model has affinity and the surface named a session.
	on      bool
	session routing.Session
	ttl     time.Duration
	// pinned: the session had a pin within its ttl.
	pinned bool
	pin    routing.Pin
	// first is the pinned key as an attempt uses it, when healthy and
	// routable for the call: tried before the plan.
	first *routing.Channel
	// served is the key that answered 2xx.
	served *routing.Channel
}

// result is other.affinity: hit when the pinned key served, repin when
// the session had a pin and another key served (or none did), miss when
// there was no pin (new session, or its ttl passed).
func (a *affinity) result() string {
	switch {
	case !a.pinned:
		return routing.AffinityMiss
	case a.served != nil && a.served.ID == a.pin.ChannelID && a.served.KeyIndex == a.pin.KeyIndex:
		return routing.AffinityHit
	}
	return routing.AffinityRepin
}

// pinWarnEvery spaces the warnings of an unreachable pin store: during an
// outage every call would otherwise log one.
const pinWarnEvery = 10 * time.Second

// lookupPin finds the session's pin when the call's model has affinity on.
// A pin store that fails costs the call its pin, never the call: it is
// routed as usual.
func (c *callCore) lookupPin(session routing.Session) {
	pins := c.rl.Router.Pins
	if pins == nil || c.price == nil {
		return
	}
	ttl := routing.AffinityOf(&c.price.Raw)
	if ttl <= 0 {
		return
	}
	c.aff = affinity{on: true, session: session, ttl: ttl}
	pin, ok, err := pins.Get(c.r.Context(), session, ttl)
	if err != nil {
		c.pinStoreFailed("read", err)
		return
	}
	if !ok {
		return
	}
	c.aff.pinned, c.aff.pin = true, pin
	if ch, ok := c.table.Pinned(c.rl.Router.Health, c.planOptions(c.model, c.price, 0), pin); ok {
		c.aff.first = ch
	}
}

// servedBy notes the key that answered 2xx and pins the session to it,
// before the answer is relayed, so the session's next turn finds the pin
// however soon it comes. A hit was renewed by its lookup.
func (c *callCore) servedBy(ch *routing.Channel) {
	c.aff.served = ch
	if !c.aff.on || c.fallbackFrom != "" || c.aff.result() == routing.AffinityHit {
		return
	}
	err := c.rl.Router.Pins.Set(c.background(), c.aff.session, routing.Pin{ChannelID: ch.ID, KeyIndex: ch.KeyIndex}, c.aff.ttl)
	if err != nil {
		c.pinStoreFailed("write", err)
	}
}

func (c *callCore) pinStoreFailed(op string, err error) {
	now := time.Now().UnixNano()
	last := c.rl.pinWarned.Load()
	if now-last < int64(pinWarnEvery) || !c.rl.pinWarned.CompareAndSwap(last, now) {
		return
	}
	c.rl.Logger.WarnContext(c.r.Context(), "cache affinity pin store failed; routing without pins", "op", op, "err", err)
}

// planOptions is the routing question for model at price: its strategy,
// and for the cost strategy the upstream cost on each channel, as every
// sender asks it (routing.OptionsFor).
func (c *callCore) planOptions(model string, price *billing.Price, max int) routing.PlanOptions {
	o := routing.PlanOptions{Group: c.principal.Group, Model: model, Max: max, Filter: c.filter}
	if price == nil {
		return o
	}
	return routing.OptionsFor(o, &price.Raw)
}
