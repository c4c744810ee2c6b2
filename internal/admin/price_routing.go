package admin

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// maxAffinityTTL bounds a pin's lifetime: providers keep a prompt cache for
// minutes, an hour at most with extended caching; a day leaves room.
const maxAffinityTTL = 24 * 3600

// readRouting decodes a price's affinity and routing members (CONTRACT
// §14). Members left out of affinity take the defaults (on, 300 s), so
// {"ttl_seconds": 3600} lengthens the pin without turning anything off.
func readRouting(f fields, p *store.ModelPrice) error {
	if f.has("affinity") && !f.isNull("affinity") {
		var obj map[string]json.RawMessage
		if _, err := get(f, "affinity", &obj); err != nil || obj == nil {
			return badField("affinity", "must be an object with enabled and ttl_seconds")
		}
		af := fields{}
		for k, v := range obj {
			if k != "enabled" && k != "ttl_seconds" {
				return badField("affinity", "has unknown field %s; allowed fields are enabled, ttl_seconds", k)
			}
			af["affinity."+k] = v
		}
		a := store.Affinity{Enabled: true, TTLSeconds: routing.DefaultAffinityTTLSeconds}
		if _, err := get(af, "affinity.enabled", &a.Enabled); err != nil {
			return err
		}
		if _, err := get(af, "affinity.ttl_seconds", &a.TTLSeconds); err != nil {
			return err
		}
		if a.TTLSeconds < 1 || a.TTLSeconds > maxAffinityTTL {
			return badField("affinity.ttl_seconds", "must be a whole number of seconds from 1 to %d", maxAffinityTTL)
		}
		p.Affinity = &a
	}
	if f.has("routing") && !f.isNull("routing") {
		var obj map[string]json.RawMessage
		if _, err := get(f, "routing", &obj); err != nil || obj == nil {
			return badField("routing", "must be an object with strategy")
		}
		var rc store.RoutingChoice
		for k, v := range obj {
			if k != "strategy" {
				return badField("routing", "has unknown field %s; allowed fields are strategy", k)
			}
			if _, err := get(fields{"routing.strategy": v}, "routing.strategy", &rc.Strategy); err != nil {
				return err
			}
		}
		if !slices.Contains(routing.Strategies, rc.Strategy) {
			return badField("routing.strategy", "must be one of %s", strings.Join(routing.Strategies, ", "))
		}
		p.Routing = &rc
	}
	return nil
}
