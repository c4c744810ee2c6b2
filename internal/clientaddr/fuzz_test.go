package clientaddr

import (
	"net/http"
	"net/netip"
	"testing"
)

// FuzzClient feeds arbitrary forwarding headers from a trusted peer: the
// answer is always a valid address, never a trusted proxy unless the
// whole chain is trusted, and an untrusted peer is always its own client.
func FuzzClient(f *testing.F) {
	f.Add("198.51.100.1, 10.0.0.2", `for=192.0.2.60;proto=http`)
	f.Add("[2001:db8::1]:80", `for="[2001:db8:cafe::17]:4711", for=unknown`)
	f.Add(",,,", `for=";`)
	f.Add("", `For="_hidden";by=1.2.3.4`)
	p, _ := Parse([]string{"10.0.0.0/8", "fd00::/8"})
	peer := netip.MustParseAddr("10.0.0.1")
	outsider := netip.MustParseAddr("203.0.113.9")
	f.Fuzz(func(t *testing.T, xff, fwd string) {
		h := http.Header{}
		if xff != "" {
			h.Set("X-Forwarded-For", xff)
		}
		if fwd != "" {
			h.Set("Forwarded", fwd)
		}
		got := p.Client(peer, h)
		if !got.IsValid() || got.Zone() != "" || got.Is4In6() {
			t.Fatalf("client %v is not a plain address", got)
		}
		if p.Client(outsider, h) != outsider {
			t.Fatal("an untrusted peer's headers were believed")
		}
		if _, err := netip.ParseAddrPort(netip.AddrPortFrom(got, 0).String()); err != nil {
			t.Fatalf("RemoteAddr %v does not read back: %v", got, err)
		}
	})
}
