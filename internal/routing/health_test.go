package routing

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// memRepo is a HealthRepo in memory, shared by several Health values as
// nodes share a database.
type memRepo struct {
	mu   sync.Mutex
	recs map[HealthKey]store.ChannelHealth
}

func newMemRepo() *memRepo { return &memRepo{recs: map[HealthKey]store.ChannelHealth{}} }

func (m *memRepo) All(context.Context) ([]store.ChannelHealth, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []store.ChannelHealth{}
	for _, r := range m.recs {
		out = append(out, r)
	}
	return out, nil
}

func (m *memRepo) Swap(_ context.Context, h store.ChannelHealth, version int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := HealthKey{h.ChannelID, h.KeyIndex}
	if m.recs[k].Version != version {
		return false, nil
	}
	h.Version = version + 1
	m.recs[k] = h
	return true, nil
}

func (m *memRepo) LeaseProbe(_ context.Context, id int64, key int, due, next time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[HealthKey{id, key}]
	if !ok || r.State != StateAutoDisabled || !r.NextProbe.Equal(due) {
		return false, nil
	}
	r.NextProbe = next
	m.recs[HealthKey{id, key}] = r
	return true, nil
}

func (m *memRepo) Reset(_ context.Context, id int64, reason string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, r := range m.recs {
		if k.ChannelID == id {
			m.recs[k] = store.ChannelHealth{ChannelID: id, KeyIndex: k.KeyIndex, State: StateHealthy, Reason: reason, Since: at, Version: r.Version + 1}
		}
	}
	return nil
}

func (m *memRepo) Delete(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.recs {
		if k.ChannelID == id {
			delete(m.recs, k)
		}
	}
	return nil
}

func TestJudgeFollowsTheChannelPolicy(t *testing.T) {
	custom := DefaultPolicy()
	custom.RetryStatuses, custom.DisableStatuses = []int{500}, []int{418}
	def := DefaultPolicy()
	cases := []struct {
		name   string
		policy Policy
		err    *ir.Error
		want   verdict
		moveOn bool
	}{
		{"a 500 is a failure that moves on", def, &ir.Error{UpstreamStatus: 500}, failure, true},
		{"a 500 left out of retry_statuses still counts but goes back to the client", Policy{}, &ir.Error{UpstreamStatus: 500}, failure, false},
		{"a 429 throttles at once", def, &ir.Error{UpstreamStatus: 429}, throttled, true},
		{"a 401 refuses the credentials", def, &ir.Error{UpstreamStatus: 401}, refused, true},
		{"a 402 refuses the account", def, &ir.Error{UpstreamStatus: 402}, refused, true},
		{"a custom disable status refuses", custom, &ir.Error{UpstreamStatus: 418}, refused, true},
		{"a 401 outside a custom disable list goes back to the client", custom, &ir.Error{UpstreamStatus: 401}, stop, false},
		{"a 429 saying the balance is gone refuses", def, &ir.Error{UpstreamStatus: 429, Code: "insufficient_quota"}, refused, true},
		{"a 429 whose type says the balance is gone refuses", def, &ir.Error{UpstreamStatus: 429, Kind: ir.KindQuota}, refused, true},
		{"a 400 the decoder found a bad key in (Gemini API_KEY_INVALID) refuses", def, &ir.Error{UpstreamStatus: 400, Retry: ir.RetryNextAndCool, Message: "API key not valid. Please pass a valid API key."}, refused, true},
		{"a 400 with a bad-key code refuses", def, &ir.Error{UpstreamStatus: 400, Code: "invalid_api_key"}, refused, true},
		{"a 400 echoing the client's 'invalid api key' goes back to the client", def, &ir.Error{UpstreamStatus: 400, Kind: ir.KindInvalidRequest, Retry: ir.RetryNever,
			Message: `Invalid value for 'encoding_format': 'invalid api key'. Supported values are: 'float' and 'base64'.`}, stop, false},
		{"a 400 echoing 'insufficient balance' goes back to the client", def, &ir.Error{UpstreamStatus: 400, Message: "unknown field: insufficient balance"}, stop, false},
		{"a 429 rate limit mentioning insufficient_quota in its message only throttles", def, &ir.Error{UpstreamStatus: 429, Kind: ir.KindRateLimit, Message: "input was: insufficient_quota"}, throttled, true},
		{"a plain 400 goes back to the client", def, &ir.Error{UpstreamStatus: 400, Message: "bad messages"}, stop, false},
		{"a timeout is a failure that moves on", def, &ir.Error{Status: 504, Kind: ir.KindTimeout, Retry: ir.RetryNext}, failure, true},
		{"a refused conversion moves on without blame", def, &ir.Error{Status: 400, Retry: ir.RetryNext}, next, true},
		{"a client that left stops", def, &ir.Error{Status: 499}, stop, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, moveOn := judge(&tc.policy, tc.err)
			if v != tc.want || moveOn != tc.moveOn {
				t.Fatalf("judge = %v, %v; want %v, %v", v, moveOn, tc.want, tc.moveOn)
			}
		})
	}
}

func TestParsePolicyRefusesBadValuesNamingTheSetting(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]any
		field    string
	}{
		{"defaults", nil, ""},
		{"decimal seconds", map[string]any{"cooldown_seconds": 0.5, "max_cooldown_seconds": 2.5}, ""},
		{"a zero threshold", map[string]any{"failure_threshold": 0}, "failure_threshold"},
		{"a fractional threshold", map[string]any{"failure_threshold": 1.5}, "failure_threshold"},
		{"a negative cool-down", map[string]any{"cooldown_seconds": -1}, "cooldown_seconds"},
		{"a string interval", map[string]any{"probe_interval_seconds": "60"}, "probe_interval_seconds"},
		{"a status below 100", map[string]any{"disable_statuses": []any{99}}, "disable_statuses"},
		{"an unknown probe kind", map[string]any{"probe": "images"}, "probe"},
		{"round-robin keys", map[string]any{"key_selection": "round_robin"}, ""},
		{"random keys", map[string]any{"key_selection": "random"}, ""},
		{"an unknown key selection", map[string]any{"key_selection": "weighted"}, "key_selection"},
		{"a key selection that is not a string", map[string]any{"key_selection": 1}, "key_selection"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePolicy(tc.settings)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			pe, ok := err.(*PolicyError)
			if !ok || pe.Field != tc.field {
				t.Fatalf("error %v, want one naming %s", err, tc.field)
			}
		})
	}
}

func TestTwoNodesMakeOneTransitionForTheSameFailure(t *testing.T) {
	repo := newMemRepo()
	var mu sync.Mutex
	events := 0
	nodes := []*Health{NewHealth(repo, nil), NewHealth(repo, nil)}
	c := &Channel{Channel: store.Channel{ID: 1, Name: "c"}, Policy: DefaultPolicy()}
	for _, h := range nodes {
		h.SetOnChange(func(HealthEvent) { mu.Lock(); events++; mu.Unlock() })
	}
	for _, h := range nodes {
		h.Report(c, 0, &ir.Error{UpstreamStatus: 401, Message: "bad key"})
	}
	for _, h := range nodes {
		if h.Routable(1, 0) || h.Status(1, 0).State != StateAutoDisabled {
			t.Fatalf("a node still routes to the auto-disabled channel: %+v", h.Status(1, 0))
		}
	}
	if events != 1 {
		t.Fatalf("events %d, want 1", events)
	}
}

func TestAResetIsSeenByTheOtherNodeAndLaterFailuresStillCount(t *testing.T) {
	repo := newMemRepo()
	a, b := NewHealth(repo, nil), NewHealth(repo, nil)
	c := &Channel{Channel: store.Channel{ID: 1, Name: "c"}, Policy: DefaultPolicy()}
	a.Report(c, 0, &ir.Error{UpstreamStatus: 403})
	if err := b.Sync(context.Background()); err != nil || b.Routable(1, 0) {
		t.Fatalf("b did not see the auto-disable: %v", err)
	}
	if err := b.Reset(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(context.Background()); err != nil || !a.Routable(1, 0) {
		t.Fatalf("a did not see the reset: %v", err)
	}
	a.Report(c, 0, &ir.Error{UpstreamStatus: 403})
	b.Sync(context.Background())
	if b.Routable(1, 0) {
		t.Fatal("a second auto-disable after the reset was lost")
	}
}

// A key holder controls what a 400 echoes back; two such answers must not
// take both keys of a channel out of service.
func TestAClientEchoedPhraseCannotAutoDisableKeys(t *testing.T) {
	h := NewHealth(nil, nil)
	c := &Channel{Channel: store.Channel{ID: 7, Name: "c"}, Policy: DefaultPolicy()}
	echo := &ir.Error{Status: 400, UpstreamStatus: 400, Kind: ir.KindInvalidRequest, Retry: ir.RetryNever,
		Message: `Invalid value for 'encoding_format': 'invalid api key'`}
	for key := 0; key < 2; key++ {
		if h.Report(c, key, echo) {
			t.Fatalf("key %d: a client's bad input moved on to another channel", key)
		}
		if st := h.Status(c.ID, key); st.State != StateHealthy {
			t.Fatalf("key %d is %s (%s) after a 400 that echoed the client", key, st.State, st.Reason)
		}
	}
	h.Report(c, 1, &ir.Error{Status: 401, UpstreamStatus: 401, Retry: ir.RetryNextAndCool, Message: "no"})
	if st := h.Status(c.ID, 1); st.State != StateAutoDisabled {
		t.Fatalf("a 401 left key 1 %s, want auto_disabled", st.State)
	}
}
