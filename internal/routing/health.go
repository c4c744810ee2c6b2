package routing

import (
	"sync"
	"sync/atomic"
	"time"
)

// Health remembers channels that answered 401/403 and keeps them out of
// routing for a cool-down: a rejected credential will not heal by retrying.
type Health struct {
	cooldown time.Duration
	now      func() time.Time
	m        sync.Map // channel id → *state
}

type state struct {
	until     atomic.Int64 // unix nanos
	lastError atomic.Value // string
	failures  atomic.Int64
}

// Status is what the admin API shows about a channel's health.
type Status struct {
	Healthy       bool       `json:"healthy"`
	CooldownUntil *time.Time `json:"cooldown_until,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
	Failures      int64      `json:"failures"`
}

// NewHealth returns a health tracker with the given cool-down.
func NewHealth(cooldown time.Duration) *Health { return &Health{cooldown: cooldown, now: time.Now} }

func (h *Health) get(id int64) *state {
	if v, ok := h.m.Load(id); ok {
		return v.(*state)
	}
	v, _ := h.m.LoadOrStore(id, &state{})
	return v.(*state)
}

// Cooling reports whether the channel is in cool-down now.
func (h *Health) Cooling(id int64) bool {
	v, ok := h.m.Load(id)
	return ok && h.now().UnixNano() < v.(*state).until.Load()
}

// CoolDown takes the channel out of routing for the cool-down period.
func (h *Health) CoolDown(id int64, reason string) {
	s := h.get(id)
	s.until.Store(h.now().Add(h.cooldown).UnixNano())
	s.lastError.Store(reason)
	s.failures.Add(1)
}

// Failed records a failure that does not cool the channel down.
func (h *Health) Failed(id int64, reason string) {
	s := h.get(id)
	s.lastError.Store(reason)
	s.failures.Add(1)
}

// Succeeded clears the failure count.
func (h *Health) Succeeded(id int64) {
	if v, ok := h.m.Load(id); ok {
		v.(*state).failures.Store(0)
	}
}

// Reset puts a channel back into routing at once (after an admin fixed it).
func (h *Health) Reset(id int64) { h.m.Delete(id) }

// Status returns the channel's health for display.
func (h *Health) Status(id int64) Status {
	st := Status{Healthy: true}
	v, ok := h.m.Load(id)
	if !ok {
		return st
	}
	s := v.(*state)
	st.Failures = s.failures.Load()
	if e, ok := s.lastError.Load().(string); ok {
		st.LastError = e
	}
	if until := s.until.Load(); h.now().UnixNano() < until {
		t := time.Unix(0, until).UTC()
		st.Healthy, st.CooldownUntil = false, &t
	}
	return st
}
