package clientaddr

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func mustParse(t *testing.T, list ...string) Proxies {
	t.Helper()
	p, err := Parse(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheClientAddressIsTakenFromHeadersOnlyWhenThePeerIsTrusted(t *testing.T) {
	p := mustParse(t, "10.0.0.0/8", "192.168.1.5", "fd00::/8")
	cases := []struct {
		name   string
		peer   string
		header http.Header
		want   string
	}{
		{"no header", "10.0.0.1", nil, "10.0.0.1"},
		{"an untrusted peer's X-Forwarded-For is ignored", "203.0.113.9", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.9"},
		{"an untrusted peer's Forwarded is ignored", "203.0.113.9", http.Header{"Forwarded": {"for=198.51.100.1"}}, "203.0.113.9"},
		{"one proxy", "10.0.0.1", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"the client's own entries left of the real one are ignored", "10.0.0.1", http.Header{"X-Forwarded-For": {"1.1.1.1, 2.2.2.2, 198.51.100.1"}}, "198.51.100.1"},
		{"a chain of trusted proxies is walked", "10.0.0.1", http.Header{"X-Forwarded-For": {"1.1.1.1, 198.51.100.1, 192.168.1.5, 10.9.9.9"}}, "198.51.100.1"},
		{"repeated headers are one list", "10.0.0.1", http.Header{"X-Forwarded-For": {"1.1.1.1", "198.51.100.1, 10.2.2.2"}}, "198.51.100.1"},
		{"only trusted hops give the left-most", "10.0.0.1", http.Header{"X-Forwarded-For": {"10.3.3.3, 10.2.2.2"}}, "10.3.3.3"},
		{"a port on a hop", "10.0.0.1", http.Header{"X-Forwarded-For": {"198.51.100.1:4711"}}, "198.51.100.1"},
		{"an IPv6 hop with a port", "10.0.0.1", http.Header{"X-Forwarded-For": {"[2001:db8::1]:80"}}, "2001:db8::1"},
		{"garbage right of the client stops at the nearest proxy", "10.0.0.1", http.Header{"X-Forwarded-For": {"198.51.100.1, not-an-ip"}}, "10.0.0.1"},
		{"garbage left of the client is the client's own", "10.0.0.1", http.Header{"X-Forwarded-For": {"evil, 198.51.100.1"}}, "198.51.100.1"},
		{"an IPv4-mapped peer is trusted as IPv4", "::ffff:10.0.0.1", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"Forwarded", "10.0.0.1", http.Header{"Forwarded": {`for=192.0.2.60;proto=http;by=203.0.113.43`}}, "192.0.2.60"},
		{"Forwarded with a quoted IPv6 and port", "fd00::1", http.Header{"Forwarded": {`for="[2001:db8:cafe::17]:4711"`}}, "2001:db8:cafe::17"},
		{"Forwarded walks its elements", "10.0.0.1", http.Header{"Forwarded": {`for=1.1.1.1, for=192.0.2.60, for=10.4.4.4`}}, "192.0.2.60"},
		{"Forwarded unknown stops at the proxy", "10.0.0.1", http.Header{"Forwarded": {`for=unknown`}}, "10.0.0.1"},
		{"X-Forwarded-For wins over Forwarded", "10.0.0.1", http.Header{"X-Forwarded-For": {"198.51.100.1"}, "Forwarded": {"for=1.1.1.1"}}, "198.51.100.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Client(netip.MustParseAddr(tc.peer), tc.header)
			if got != netip.MustParseAddr(tc.want) {
				t.Fatalf("client %v, want %s", got, tc.want)
			}
		})
	}
}

func TestWithoutTrustedProxiesHeadersAreIgnored(t *testing.T) {
	p := mustParse(t)
	got := p.Client(netip.MustParseAddr("10.0.0.1"), http.Header{"X-Forwarded-For": {"198.51.100.1"}})
	if got != netip.MustParseAddr("10.0.0.1") {
		t.Fatalf("client %v; with no trusted proxy the header was believed", got)
	}
}

func TestParseRefusesWhatIsNotANetwork(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "proxy.local", "10.0.0.1/8/8", "fe80::1%eth0"} {
		if _, err := Parse([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	p, err := Parse([]string{" 10.0.0.0/8 ", "", "::1"})
	if err != nil || !p.Trusted(netip.MustParseAddr("10.1.2.3")) || !p.Trusted(netip.MustParseAddr("::1")) || p.Trusted(netip.MustParseAddr("11.0.0.1")) {
		t.Fatalf("Parse = %+v, %v", p, err)
	}
}

func TestWrapRewritesRemoteAddrForWhatComesAfter(t *testing.T) {
	p := mustParse(t, "10.0.0.0/8")
	var seen string
	h := p.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = r.RemoteAddr }))
	cases := []struct{ peer, xff, want string }{
		{"10.0.0.1:5000", "198.51.100.1", "198.51.100.1:0"},
		{"10.0.0.1:5000", "2001:db8::1", "[2001:db8::1]:0"},
		{"203.0.113.9:5000", "198.51.100.1", "203.0.113.9:5000"},
		{"10.0.0.1:5000", "", "10.0.0.1:5000"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if seen != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: handler saw %s, want %s", tc.peer, tc.xff, seen, tc.want)
		}
		if r.RemoteAddr != tc.peer {
			t.Errorf("the caller's request was changed to %s", r.RemoteAddr)
		}
	}
}
