package task

import (
	"context"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

type failingTransport struct{ errno syscall.Errno }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", f.errno)}
}

// A submission the gateway could not send for want of its own descriptors
// or ports ends with a 503 that says so, refunds its reservation and leaves
// the channel in rotation however often it happens; a refused connection
// is the channel's failure and cools it.
func TestASubmitThatFailsForTheGatewaysOwnShortageLeavesTheChannelAlone(t *testing.T) {
	cases := []struct {
		name       string
		errno      syscall.Errno
		status     int
		code       string
		wantHealth string
	}{
		{"no descriptor left", syscall.EMFILE, http.StatusServiceUnavailable, upstream.CodeOutOfResources, routing.StateHealthy},
		{"the system's file table is full", syscall.ENFILE, http.StatusServiceUnavailable, upstream.CodeOutOfResources, routing.StateHealthy},
		{"no local port left", syscall.EADDRNOTAVAIL, http.StatusServiceUnavailable, upstream.CodeOutOfResources, routing.StateHealthy},
		{"the vendor refuses connections", syscall.ECONNREFUSED, http.StatusBadGateway, "upstream_unreachable", routing.StateCooling},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newCoreEnv(t)
			e.svc.client = upstream.NoRedirects(&http.Client{Transport: failingTransport{tc.errno}})
			p, err := e.Keys.Authenticate(context.Background(), aliceKey)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := DecodeJSON([]byte(`{"prompt":"a cat","seconds":4}`))
			for i := range 5 {
				_, err := e.svc.Submit(context.Background(), Submission{Header: http.Header{}, Generation: e.gens.Current(), Plugin: e.plugin,
					Principal: p, Model: "acme-v1", Action: "generate", Body: body, Headers: map[string]any{}, Files: []any{}, Retain: true})
				if err == nil {
					t.Fatalf("submit %d was accepted by a transport that fails", i)
				}
				// A cooled channel answers model_not_available: only the
				// gateway's own shortage keeps every submit on the channel.
				if got := ir.As(err); (i == 0 || tc.wantHealth == routing.StateHealthy) && (got.Status != tc.status || got.Code != tc.code) {
					t.Fatalf("submit %d: %v, want %d %s", i, err, tc.status, tc.code)
				}
			}
			ch := e.Router.Table().Channels()[0]
			if st := e.Router.Health.Status(ch.ID, 0); st.State != tc.wantHealth {
				t.Fatalf("the channel is %+v after five failed submits, want %s", st, tc.wantHealth)
			}
			if q := e.Quota(e.alice); q != 1_000_000 {
				t.Fatalf("alice's quota is %d after submits that were never sent, want 1000000", q)
			}
		})
	}
}
