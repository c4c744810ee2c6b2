package taskhttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// keyedVendor accepts either of two keys and remembers which submitted
// each job and which every later request about it carried.
type keyedVendor struct {
	mu        sync.Mutex
	n         int
	submitted map[string]string   // job → Authorization of its submit
	asked     map[string][]string // job → Authorization of each poll
}

func (v *keyedVendor) serve(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	auth := r.Header.Get("Authorization")
	if auth != "Bearer key-one" && auth != "Bearer key-two" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/jobs":
		v.n++
		job := "job-" + string(rune('0'+v.n))
		v.submitted[job] = auth
		_ = json.NewEncoder(w).Encode(map[string]any{"id": job})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/jobs/"):
		job := strings.TrimPrefix(r.URL.Path, "/v1/jobs/")
		v.asked[job] = append(v.asked[job], auth)
		_, _ = w.Write([]byte(`{"status":"running"}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// An upstream task belongs to the account of the key that submitted it: on
// a channel with several keys, every poll of a task carries that key
// alone — not the channel's whole key list, not another of its keys — and
// the poll's answer is judged against that key's health.
func TestATaskIsPolledWithTheOneKeyItWasSubmittedWith(t *testing.T) {
	e := newEnv(t, "keyed.js")
	e.price(store.ModelPrice{Name: "keyed-v1", PerCall: 0.002})
	v := &keyedVendor{submitted: map[string]string{}, asked: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(srv.Close)
	c := e.channel("keyed-main", "keyed", srv.URL, []string{"keyed-v1"}, func(c *store.Channel) {
		c.Type, c.Key = 1, "key-one\nkey-two"
		c.Settings["key_selection"] = routing.KeySelectionRoundRobin
	})
	for range 4 {
		if code, out := e.postJSON("/keyed/v1/videos", userKey, `{"model":"keyed-v1","prompt":"p"}`); code != 200 {
			t.Fatalf("submit: %d %v", code, out)
		}
	}
	e.tick(2)
	v.mu.Lock()
	defer v.mu.Unlock()
	used := map[string]bool{}
	for job, auth := range v.submitted {
		used[auth] = true
		if len(v.asked[job]) == 0 {
			t.Errorf("%s (submitted with %q) was never polled", job, auth)
		}
		for _, got := range v.asked[job] {
			if got != auth {
				t.Errorf("%s submitted with %q was polled with %q", job, auth, got)
			}
		}
	}
	if len(used) != 2 {
		t.Fatalf("the submits used keys %v, want both keys of the channel", used)
	}
	for i := range 2 {
		if st := e.router.Health.Status(c.ID, i).State; st != routing.StateHealthy {
			t.Errorf("key %d is %s after polls answered 200", i, st)
		}
	}
}
