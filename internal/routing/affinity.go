package routing

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Cache affinity (CONTRACT §14): a session goes back to the channel key
// that served it last, where the provider holds its prompt prefix.

// DefaultAffinityTTLSeconds is a pin's lifetime when the model entry names
// none: the usual prompt cache lifetime.
const DefaultAffinityTTLSeconds = 300

// Affinity results in the usage row's other.affinity.
const (
	AffinityHit   = "hit"
	AffinityMiss  = "miss"
	AffinityRepin = "repin"
)

// AffinityOf is the model entry's affinity: on for 300 s unless it says
// otherwise. ttl 0 means off.
func AffinityOf(p *store.ModelPrice) time.Duration {
	if p == nil || p.Affinity == nil {
		return DefaultAffinityTTLSeconds * time.Second
	}
	if !p.Affinity.Enabled || p.Affinity.TTLSeconds <= 0 {
		return 0
	}
	return time.Duration(p.Affinity.TTLSeconds) * time.Second
}

// StrategyOf is the model entry's strategy, weighted by default.
func StrategyOf(p *store.ModelPrice) string {
	if p == nil || p.Routing == nil || p.Routing.Strategy == "" {
		return StrategyWeighted
	}
	return p.Routing.Strategy
}

// Pin is where a session was last served.
type Pin struct {
	ChannelID int64
	KeyIndex  int
}

// PinStore keeps sessions' pins, each for its ttl since the last request
// of the session. Sessions are SessionKey values; one user's session is
// never another's, whatever their hashes.
type PinStore interface {
	// Get returns the session's pin and renews it for ttl.
	Get(ctx context.Context, session Session, ttl time.Duration) (Pin, bool, error)
	// Set pins the session for ttl.
	Set(ctx context.Context, session Session, p Pin, ttl time.Duration) error
}

// Pinned is the channel a pin names, as one attempt uses it (with the
// pinned key alone), when the pin may be used now: the channel is in the
// snapshot's plan for the call (enabled, serving the group and model,
// passing filter) and the key is healthy. ok is false otherwise.
func (t *Table) Pinned(h *Health, o PlanOptions, p Pin) (*Channel, bool) {
	c := t.byID[p.ChannelID]
	if c == nil || c.Status != store.StatusEnabled || p.KeyIndex < 0 || p.KeyIndex >= c.KeyCount() {
		return nil, false
	}
	if !t.serves(c, o.Group, o.Model) || (o.Filter != nil && !o.Filter(c)) || !h.Routable(c.ID, p.KeyIndex) {
		return nil, false
	}
	return c.WithKey(p.KeyIndex), true
}

// serves reports whether c is one of the channels routed for group and
// model.
func (t *Table) serves(c *Channel, group, model string) bool {
	for _, tr := range t.index[group][model] {
		for _, x := range tr.channels {
			if x == c {
				return true
			}
		}
	}
	return false
}
