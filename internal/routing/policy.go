package routing

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// Policy is a channel's health settings (CONTRACT §10 "Channel health"),
// read from its settings once per routing snapshot.
type Policy struct {
	// FailureThreshold consecutive failures (5xx, timeouts, resets) cool
	// the channel down.
	FailureThreshold int
	// Cooldown is the first cool-down; it doubles up to MaxCooldown while
	// failures continue.
	Cooldown, MaxCooldown time.Duration
	// ProbeInterval is how often an auto-disabled channel is probed.
	ProbeInterval time.Duration
	// RetryStatuses move on to the next channel; DisableStatuses
	// auto-disable the channel (and also move on).
	RetryStatuses, DisableStatuses []int
	// KeySelection spreads calls over the channel's keys: random (the
	// default) or round_robin.
	KeySelection string
}

// DefaultPolicy is the policy of a channel whose settings name none.
func DefaultPolicy() Policy {
	return Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, MaxCooldown: 600 * time.Second,
		ProbeInterval: 300 * time.Second,
		RetryStatuses: []int{408, 409, 429, 500, 502, 503, 504}, DisableStatuses: []int{401, 402, 403},
		KeySelection: KeySelectionRandom}
}

// Retries reports whether an upstream status moves on to the next channel.
func (p *Policy) Retries(status int) bool { return slices.Contains(p.RetryStatuses, status) }

// Disables reports whether an upstream status auto-disables the channel.
func (p *Policy) Disables(status int) bool { return slices.Contains(p.DisableStatuses, status) }

// PolicyError names the setting that is wrong.
type PolicyError struct {
	Field   string
	Message string
}

func (e *PolicyError) Error() string { return "settings." + e.Field + " " + e.Message }

// ParsePolicy reads the health settings of a channel, refusing bad values
// with the setting they belong to. Settings it does not know are ignored:
// they belong to the channel type.
func ParsePolicy(settings map[string]any) (Policy, error) {
	p := DefaultPolicy()
	if v, ok := settings["failure_threshold"]; ok {
		n, err := number(v)
		if err != nil || n < 1 || n != math.Trunc(n) || n > 1e6 {
			return p, &PolicyError{"failure_threshold", "must be a whole number of at least 1"}
		}
		p.FailureThreshold = int(n)
	}
	for _, s := range []struct {
		name string
		dst  *time.Duration
	}{{"cooldown_seconds", &p.Cooldown}, {"max_cooldown_seconds", &p.MaxCooldown}, {"probe_interval_seconds", &p.ProbeInterval}} {
		v, ok := settings[s.name]
		if !ok {
			continue
		}
		n, err := number(v)
		if err != nil || n <= 0 || n > 365*24*3600 {
			return p, &PolicyError{s.name, "must be a positive number of seconds (at most a year)"}
		}
		*s.dst = time.Duration(n * float64(time.Second))
	}
	if _, ok := settings["max_cooldown_seconds"]; !ok && p.MaxCooldown < p.Cooldown {
		p.MaxCooldown = p.Cooldown
	}
	if p.MaxCooldown < p.Cooldown {
		return p, &PolicyError{"max_cooldown_seconds", "must not be less than cooldown_seconds"}
	}
	if v, ok := settings["probe"]; ok && v != "chat" && v != "embeddings" {
		return p, &PolicyError{"probe", `must be "chat" or "embeddings"`}
	}
	if v, ok := settings["key_selection"]; ok {
		s, _ := v.(string)
		if s != KeySelectionRandom && s != KeySelectionRoundRobin {
			return p, &PolicyError{"key_selection", `must be "random" or "round_robin"`}
		}
		p.KeySelection = s
	}
	var err error
	if p.RetryStatuses, err = statuses(settings, "retry_statuses", p.RetryStatuses); err != nil {
		return p, err
	}
	p.DisableStatuses, err = statuses(settings, "disable_statuses", p.DisableStatuses)
	return p, err
}

// PolicyOf is ParsePolicy for a snapshot: a value that slipped past
// validation (an older database) falls back to the defaults rather than
// leaving the channel unroutable.
func PolicyOf(settings map[string]any) Policy {
	p, err := ParsePolicy(settings)
	if err != nil {
		return DefaultPolicy()
	}
	return p
}

func statuses(settings map[string]any, name string, def []int) ([]int, error) {
	v, ok := settings[name]
	if !ok {
		return def, nil
	}
	list, ok := v.([]any)
	if !ok {
		if ints, isInts := v.([]int); isInts {
			for _, n := range ints {
				list = append(list, n)
			}
		} else {
			return nil, &PolicyError{name, "must be a list of HTTP statuses (100-599)"}
		}
	}
	out := make([]int, 0, len(list))
	for _, x := range list {
		n, err := number(x)
		if err != nil || n != math.Trunc(n) || n < 100 || n > 599 {
			return nil, &PolicyError{name, "must be a list of HTTP statuses (100-599)"}
		}
		out = append(out, int(n))
	}
	return out, nil
}

// number reads a JSON or YAML number; strings are not numbers.
func number(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			break
		}
		return n, nil
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case uint64:
		return float64(n), nil
	case json.Number:
		return n.Float64()
	}
	return 0, fmt.Errorf("not a number: %v", v)
}
