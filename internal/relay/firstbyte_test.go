package relay

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The first-byte timer's function is the attempt's cancel itself; whether
// it fired is read from the timer. These cases hold the classification of
// an exchange that got no answer to what clients and health see.
func TestAnExchangeWithoutAnAnswerIsATimeoutOnlyWhenTheFirstByteTimerFired(t *testing.T) {
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer silent.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cases := []struct {
		name     string
		url      string
		wantCode int
		wantType string
	}{
		{"silent past the first-byte timeout", silent.URL, 504, "upstream_timeout"},
		{"unreachable at once", dead.URL, 502, "upstream_unreachable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.RetryCount, o.FirstByteTimeout = 0, 150*time.Millisecond })
			e.channel("only", tc.url, nil)
			before := e.balance()
			resp := e.post("/v1/chat/completions", testKey, chatBody)
			body := readJSON(t, resp)
			if resp.StatusCode != tc.wantCode || gjsonOf(body, "error.code") != tc.wantType {
				t.Fatalf("status %d body %v, want %d %s", resp.StatusCode, body, tc.wantCode, tc.wantType)
			}
			e.flush()
			if e.balance() != before {
				t.Fatalf("a call without an answer was charged %d", before-e.balance())
			}
		})
	}
}
