package routing

import (
	"fmt"
	"time"
)

// Status is what the admin API shows about a channel's health.
type Status struct {
	State  string     `json:"state"`
	Reason string     `json:"reason"`
	Since  *time.Time `json:"since"`
	Until  *time.Time `json:"until"`
}

// Status is the key's state for display; an expired cool-down shows as
// healthy because routing uses the key again.
func (h *Health) Status(id int64, key int) Status {
	st := Status{State: StateHealthy}
	v, ok := h.m.Load(HealthKey{id, key})
	if !ok {
		return st
	}
	rec := v.(*entry).rec.Load()
	if rec == nil {
		return st
	}
	since, until := rec.Since, rec.Until
	st.Since = &since
	switch {
	case rec.State == StateCooling && !h.now().Before(rec.Until):
		st.Since = &until
	case rec.State == StateHealthy:
	default:
		st.State, st.Reason = rec.State, rec.Reason
		if rec.State == StateCooling {
			st.Until = &until
		}
	}
	return st
}

// ChannelStatus is the state of a channel with keys keys, for display
// and metrics: with one key, that key's; with several, healthy while any
// key is (the keys' own states are shown one by one), otherwise the state
// the channel comes back from first — cooling, until the earliest end of
// a cool-down — with the reason of that key.
func (h *Health) ChannelStatus(id int64, keys int) Status {
	if keys <= 1 {
		return h.Status(id, 0)
	}
	var out *Status
	var last *time.Time // the channel is out since its last key went out
	for i := 0; i < keys; i++ {
		st := h.Status(id, i)
		if st.State == StateHealthy {
			return st
		}
		if st.Since != nil && (last == nil || st.Since.After(*last)) {
			last = st.Since
		}
		st.Reason = fmt.Sprintf("every key is out of use; key %d: %s", i, st.Reason)
		switch {
		case out == nil:
			out = &st
		case st.State == StateCooling && (out.State != StateCooling || st.Until.Before(*out.Until)):
			out = &st
		}
	}
	out.Since = last
	return *out
}

// Each calls f with every key that has a record (for metrics).
func (h *Health) Each(f func(k HealthKey)) {
	h.m.Range(func(k, _ any) bool { f(k.(HealthKey)); return true })
}
