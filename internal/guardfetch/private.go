package guardfetch

import "net/netip"

// specialPrefixes are ranges the standard library's predicates miss that a
// content fetch must still never reach: cloud and carrier internals,
// translation prefixes that embed an IPv4 address, and reserved space.
var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),        // "this network"; 0.x reaches the local host on Linux
	netip.MustParsePrefix("100.64.0.0/10"),    // carrier-grade NAT, also Alibaba's metadata 100.100.100.200
	netip.MustParsePrefix("168.63.129.16/32"), // Azure WireServer
	netip.MustParsePrefix("192.0.0.0/24"),     // IETF protocol assignments, Oracle metadata 192.0.0.192
	netip.MustParsePrefix("192.0.2.0/24"),     // documentation
	netip.MustParsePrefix("198.18.0.0/15"),    // benchmarking, used inside data centres
	netip.MustParsePrefix("198.51.100.0/24"),  // documentation
	netip.MustParsePrefix("203.0.113.0/24"),   // documentation
	netip.MustParsePrefix("240.0.0.0/4"),      // reserved, and the broadcast address
	netip.MustParsePrefix("::/96"),            // IPv4-compatible IPv6 (deprecated), embeds an IPv4 address
	netip.MustParsePrefix("64:ff9b::/96"),     // NAT64: reaches the embedded IPv4 address, private ones too
	netip.MustParsePrefix("64:ff9b:1::/48"),   // local-use NAT64
	netip.MustParsePrefix("100::/64"),         // discard-only
	netip.MustParsePrefix("2001:db8::/32"),    // documentation
	netip.MustParsePrefix("fec0::/10"),        // site-local (deprecated)
}

// PrivateAddr reports loopback, private, link-local, unspecified, multicast
// and the special ranges above: addresses that never belong to a public CDN.
// IPv4-mapped IPv6 addresses are judged by their IPv4 address.
func PrivateAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
