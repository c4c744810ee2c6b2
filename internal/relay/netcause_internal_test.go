package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"
)

func TestAnUnreachableUpstreamNamesItsCause(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + closed.Addr().String()
	closed.Close()
	tlsServer := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsServer.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close() // accepts into the backlog, never answers

	get := func(target string, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			return errors.New("unexpectedly answered")
		}
		return err
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"refused", get(refusedURL, 5*time.Second), "connection refused"},
		{"self-signed certificate", get(tlsServer.URL, 5*time.Second), "TLS certificate not accepted"},
		{"no answer in time", get("http://"+silent.Addr().String(), 200*time.Millisecond), "timed out"},
		{"unknown host", &url.Error{Op: "Post", URL: "https://api.example.invalid", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}}}, "no such host"},
		{"resolver down", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}},
			"the host name could not be resolved"},
		{"an HTTP/2 connection the upstream closed", &url.Error{Op: "Post", URL: "http://up", Err: errors.New(
			`http2: server sent GOAWAY and closed the connection; LastStreamID=1999, ErrCode=ENHANCE_YOUR_CALM, debug=""`)},
			"the upstream closed its HTTP/2 connection (GOAWAY)"},
		{"a connection closed under the call", &url.Error{Op: "Post", URL: "http://up", Err: io.ErrUnexpectedEOF},
			"the connection closed before the answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := unreachableCause(tc.err); got != tc.want {
				t.Fatalf("cause of %v: %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

func TestOnlyAConnectionLostUnderACallIsSharedWithTheCallsItCarried(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a refused dial fails one call", &url.Error{Op: "Post", URL: "http://up", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, false},
		{"an unknown host fails one call", &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, false},
		{"a reset connection", &url.Error{Op: "Post", URL: "http://up", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, true},
		{"a GOAWAY", errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=5, ErrCode=NO_ERROR"), true},
		{"a connection closed early", io.ErrUnexpectedEOF, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := lostUnderway(tc.err); got != tc.want {
				t.Fatalf("lostUnderway(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
