package taskhttp

import (
	"encoding/json"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A submit's upstream failure is judged by channel health under the
// channel's own policy, exactly as a chat attempt's is.
func TestASubmitFailureIsJudgedByTheChannelsHealthPolicy(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		settings  map[string]any
		wantState string
		wantNext  bool
	}{
		{"a refused key is disabled, not cooled", 401, nil, routing.StateAutoDisabled, true},
		{"a refused account is disabled", 403, nil, routing.StateAutoDisabled, true},
		{"a status the channel lists in disable_statuses disables it", 400,
			map[string]any{"disable_statuses": []any{400.0}}, routing.StateAutoDisabled, true},
		{"a 401 the channel does not list disables nothing", 401,
			map[string]any{"disable_statuses": []any{}}, routing.StateHealthy, false},
		{"a throttle cools the key and moves on", 429, nil, routing.StateCooling, true},
		{"a 5xx counts towards the threshold", 503, map[string]any{"failure_threshold": 1.0}, routing.StateCooling, true},
		{"a retry status the channel lists moves on without harm", 409, nil, routing.StateHealthy, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "pertask.js")
			broken := newVendor(t, vendorAnswer{200, `{}`})
			broken.submitStatus, broken.submitBody = tt.status, `{"message":"no"}`
			good := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
			b := e.channel("acme-a", "acme", broken.srv.URL, []string{"acme-v1"}, func(c *store.Channel) {
				c.Priority = 10
				for k, v := range tt.settings {
					c.Settings[k] = v
				}
			})
			e.channel("acme-b", "acme", good.srv.URL, []string{"acme-v1"}, nil)
			code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
			if got := e.router.Health.Status(b.ID, 0).State; got != tt.wantState {
				t.Errorf("the failing channel is %s, want %s", got, tt.wantState)
			}
			if tried := good.submitCount() == 1; tried != tt.wantNext {
				t.Errorf("next channel tried = %v, want %v (answer %d %v)", tried, tt.wantNext, code, out)
			}
			if tt.wantNext && code != 200 {
				t.Errorf("submit = %d %v, want the next channel's 200", code, out)
			}
			if !tt.wantNext && code != tt.status {
				t.Errorf("submit = %d %v, want the upstream's own %d", code, out, tt.status)
			}
		})
	}
}

// Task submits are planned by the model's routing strategy, as chat calls.
func TestTaskSubmitsFollowTheModelsLeastBusyStrategy(t *testing.T) {
	e := newEnv(t, "pertask.js")
	e.price(store.ModelPrice{Name: "acme-v1", Extra: json.RawMessage(`{"per_unit":{"seconds":0.01}}`),
		Routing: &store.RoutingChoice{Strategy: routing.StrategyLeastBusy}})
	busy := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	idle := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	b := e.channel("acme-busy", "acme", busy.srv.URL, []string{"acme-v1"}, nil)
	e.channel("acme-idle", "acme", idle.srv.URL, []string{"acme-v1"}, nil)
	// Five calls are under way on the busy channel.
	ch := e.router.Table().Channel(b.ID)
	for range 5 {
		ch.Begin()
	}
	defer func() {
		for range 5 {
			ch.End()
		}
	}()
	for i := range 12 {
		if code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`); code != 200 {
			t.Fatalf("submit %d: %d %v", i, code, out)
		}
	}
	if busy.submitCount() != 0 || idle.submitCount() != 12 {
		t.Fatalf("submits: busy=%d idle=%d, want every one on the idle channel", busy.submitCount(), idle.submitCount())
	}
}

// A submission that names a session goes back to the channel key that
// served the session, as a chat call does (CONTRACT §14).
func TestTaskSubmitsOfOneSessionKeepToThePinnedChannel(t *testing.T) {
	e := newEnv(t, "pertask.js")
	a := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	b := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	e.channel("acme-a", "acme", a.srv.URL, []string{"acme-v1"}, nil)
	e.channel("acme-b", "acme", b.srv.URL, []string{"acme-v1"}, nil)
	for i := range 10 {
		if code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p","user":"session-7"}`); code != 200 {
			t.Fatalf("submit %d: %d %v", i, code, out)
		}
	}
	if a.submitCount() != 10 && b.submitCount() != 10 {
		t.Fatalf("submits of one session: a=%d b=%d, want all on one channel", a.submitCount(), b.submitCount())
	}
	// Without a session, weighted routing spreads them (all twenty on one
	// channel by chance: one run in half a million).
	ca, cb := a.submitCount(), b.submitCount()
	for i := range 20 {
		if code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`); code != 200 {
			t.Fatalf("submit %d: %d %v", i, code, out)
		}
	}
	if a.submitCount() == ca || b.submitCount() == cb {
		t.Fatalf("20 submits without a session all went to one channel: a=%d b=%d", a.submitCount()-ca, b.submitCount()-cb)
	}
}

// A poll is the channel's key at work too: its answer reaches channel
// health, while what it means for the task stays the poll outcome's.
func TestTaskPollAnswersReachChannelHealth(t *testing.T) {
	tests := []struct {
		name      string
		answer    vendorAnswer
		wantState string
	}{
		{"a refused key is disabled", vendorAnswer{401, `{}`}, routing.StateAutoDisabled},
		{"a throttle cools the key", vendorAnswer{429, `{}`}, routing.StateCooling},
		{"a task the upstream no longer knows harms nothing", vendorAnswer{404, `{}`}, routing.StateHealthy},
		{"progress keeps it healthy", vendorAnswer{200, `{"status":"running"}`}, routing.StateHealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "pertask.js")
			v := newVendor(t, tt.answer)
			c := e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
			if code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`); code != 200 {
				t.Fatalf("submit: %d %v", code, out)
			}
			e.tick(1)
			if got := e.router.Health.Status(c.ID, 0).State; got != tt.wantState {
				t.Fatalf("after the poll the channel is %s, want %s", got, tt.wantState)
			}
		})
	}
}
