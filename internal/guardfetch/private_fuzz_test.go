package guardfetch

import (
	"net/netip"
	"testing"
)

// An IPv4 address and its IPv4-mapped IPv6 form are the same destination,
// and one inside NAT64 reaches it too: none may look public when the plain
// IPv4 address is private.
func FuzzPrivateAddrAgreesAcrossIPv6Forms(f *testing.F) {
	for _, seed := range [][4]byte{{127, 0, 0, 1}, {168, 63, 129, 16}, {100, 64, 0, 1}, {8, 8, 8, 8}, {0, 0, 0, 0}} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, a, b, c, d byte) {
		v4 := netip.AddrFrom4([4]byte{a, b, c, d})
		mapped := netip.AddrFrom16(v4.As16())
		nat64 := netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 10: 0, 11: 0, 12: a, 13: b, 14: c, 15: d})
		if PrivateAddr(v4) != PrivateAddr(mapped) {
			t.Fatalf("%s and %s disagree", v4, mapped)
		}
		if !PrivateAddr(nat64) {
			t.Fatalf("the NAT64 form %s of %s looks public", nat64, v4)
		}
	})
}
