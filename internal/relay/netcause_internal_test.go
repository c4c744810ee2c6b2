package relay

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := unreachableCause(tc.err); got != tc.want {
				t.Fatalf("cause of %v: %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
