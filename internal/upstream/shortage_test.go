package upstream

import (
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestTheGatewaysOwnShortageIsA503ThatStopsTheCall(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return &url.Error{Op: "Post", URL: "https://api.example.com/v1?key=secret", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: os.NewSyscallError("socket", errno)}}
	}
	cases := []struct {
		name       string
		err        error
		wantStatus int
		wantRetry  ir.RetryClass
	}{
		{"no descriptor left in the process", dial(syscall.EMFILE), 503, ir.RetryNever},
		{"the kernel's file table full", dial(syscall.ENFILE), 503, ir.RetryNever},
		{"no local port left", dial(syscall.EADDRNOTAVAIL), 503, ir.RetryNever},
		{"no socket memory", dial(syscall.ENOBUFS), 503, ir.RetryNever},
		{"a refused dial is still the channel's failure", dial(syscall.ECONNREFUSED), 502, ir.RetryNext},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Unreachable(tc.err)
			if e.Status != tc.wantStatus || e.Retry != tc.wantRetry {
				t.Fatalf("Unreachable: %d retry %v (%s), want %d retry %v", e.Status, e.Retry, e.Message, tc.wantStatus, tc.wantRetry)
			}
			if tc.wantStatus == 503 && (e.Code != CodeOutOfResources || Shortage(tc.err) == nil) {
				t.Fatalf("code %q, want %q", e.Code, CodeOutOfResources)
			}
			if _, isURL := e.Cause.(*url.Error); isURL {
				t.Fatal("the cause keeps the URL, which may carry a credential")
			}
		})
	}
}
