package routing

import (
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// lostConn is the error of a call whose connection went after it was sent
// at sent (the relay sets SentAt only on such failures).
func lostConn(sent time.Time) *ir.Error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_unreachable", Retry: ir.RetryNext, SentAt: sent}
}

// The bench's only channel was cooled when one HTTP/2 connection to its
// upstream closed under 2,442 calls: every call it carried reported a
// failure, and the threshold of 3 was passed at once.
func TestALostConnectionCountsOnceHoweverManyCallsItCarried(t *testing.T) {
	cases := []struct {
		name string
		// waves of calls sent together; each wave's calls all lose their
		// connection once the wave is out.
		waves, perWave int
		wantState      string
	}{
		{"2,000 calls lost with one connection are one failure", 1, 2000, StateHealthy},
		{"two connections lost one after the other are two failures", 2, 500, StateHealthy},
		{"a third loss, of calls sent after the second, cools the channel", 3, 50, StateCooling},
		{"one call lost at a time still cools at the threshold", 3, 1, StateCooling},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHealth(newMemRepo(), nil)
			c := &Channel{Channel: store.Channel{ID: 1, Name: "c"}, Policy: DefaultPolicy()}
			for range tc.waves {
				sent := time.Now()
				var wg sync.WaitGroup
				for range tc.perWave {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if !h.Report(c, 0, lostConn(sent)) {
							t.Error("a lost connection did not move the call on")
						}
					}()
				}
				wg.Wait()
			}
			if got := h.Status(1, 0).State; got != tc.wantState {
				t.Fatalf("state %s, want %s", got, tc.wantState)
			}
		})
	}
}

// Answers are each the upstream's own judgement: concurrent 502s still
// count one by one, as do failures that carry no send time (a refused dial
// fails each call on its own).
func TestFailuresThatAreNotALostConnectionStillCountEach(t *testing.T) {
	cases := []struct {
		name string
		err  *ir.Error
	}{
		{"an upstream's 502 answer", &ir.Error{Status: 502, UpstreamStatus: 502, Retry: ir.RetryNext}},
		{"a refused dial", &ir.Error{Status: 502, Kind: ir.KindUpstream, Retry: ir.RetryNext}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHealth(newMemRepo(), nil)
			c := &Channel{Channel: store.Channel{ID: 1, Name: "c"}, Policy: DefaultPolicy()}
			var wg sync.WaitGroup
			for range 3 {
				wg.Add(1)
				go func() { defer wg.Done(); h.Report(c, 0, tc.err) }()
			}
			wg.Wait()
			if got := h.Status(1, 0).State; got != StateCooling {
				t.Fatalf("state %s after three concurrent failures, want %s", got, StateCooling)
			}
		})
	}
}
