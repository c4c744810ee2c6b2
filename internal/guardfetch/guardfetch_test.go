package guardfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestGetRefusesInternalAddressesUnlessAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/doc", http.StatusFound)
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	cases := []struct {
		name         string
		address      string
		allowPrivate bool
		max          int64
		want         string // body, or a part of the error
	}{
		{"loopback refused", srv.URL + "/doc", false, 100, "private address"},
		{"localhost by name refused", "http://localhost:1/doc", false, 100, "private address"},
		{"link-local refused", "http://169.254.169.254/latest", false, 100, "private address"},
		{"a file address refused", "file:///etc/passwd", true, 100, "only http and https"},
		{"credentials in the address refused", "http://u:p@example.test/", true, 100, "credentials"},
		{"loopback allowed with private content", srv.URL + "/doc", true, 100, `{"ok":true}`},
		{"a redirect is followed", srv.URL + "/hop", true, 100, `{"ok":true}`},
		{"a body past the bound refused", srv.URL + "/doc", true, 5, "larger than 5 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New(nil, tc.allowPrivate).Get(context.Background(), tc.address, tc.max)
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one saying %q", err, tc.want)
				}
				return
			}
			if string(got) != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestANameResolvingToAPrivateAddressIsRefusedBeforeAndAtDial(t *testing.T) {
	f := New(nil, false)
	f.lookup = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
	}
	_, err := f.Get(context.Background(), "http://internal.example.test/doc", 100)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err %v, want ErrBlocked", err)
	}
	// A name that resolved to a public address at check time but connects
	// to loopback is refused by the dial guard.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "x") }))
	t.Cleanup(srv.Close)
	f.lookup = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
	}
	tr := f.client.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dial(ctx, network, strings.TrimPrefix(srv.URL, "http://"))
	}
	if _, err := f.Get(context.Background(), "http://rebinding.example.test/doc", 100); !errors.Is(err, ErrBlocked) {
		t.Fatalf("err %v, want ErrBlocked from the dial guard", err)
	}
}
