// Package clientaddr finds a request's client address behind trusted
// reverse proxies (CONTRACT §16 trusted_proxies): the connection's peer,
// unless the peer is a trusted proxy, in which case the address the proxy
// recorded in X-Forwarded-For or Forwarded. Every consumer of the client
// address (the sign-in throttle, rate limits, audit rows, logs) reads
// http.Request.RemoteAddr, which Wrap rewrites once at the edge.
package clientaddr

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies is the set of networks whose forwarding headers are believed.
// The zero value trusts no one: the connection's address is the client.
type Proxies struct {
	nets []netip.Prefix
}

// Parse reads trusted proxies, each a CIDR ("10.0.0.0/8") or a single
// address ("10.0.0.5"). Empty entries are skipped, so a trailing comma in
// the environment variable is harmless.
func Parse(list []string) (Proxies, error) {
	var p Proxies
	for _, raw := range list {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(s); err == nil {
			p.nets = append(p.nets, pfx.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return Proxies{}, fmt.Errorf("trusted_proxies: %q is neither a CIDR nor an IP address", s)
		}
		a = a.Unmap()
		p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return p, nil
}

// Empty reports whether no proxy is trusted.
func (p Proxies) Empty() bool { return len(p.nets) == 0 }

// Trusted reports whether a is one of the trusted proxies.
func (p Proxies) Trusted(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// Client is the client address of a request that came from peer with
// header h. Only a trusted peer's headers count: X-Forwarded-For when it
// is present (every proxy appends to it, so the right-most address that is
// not itself a trusted proxy is the client; everything to its left was
// written by the client and is ignored), else Forwarded's for= values the
// same way. A chain of nothing but trusted proxies gives its left-most
// address; a header that cannot be read gives the peer.
func (p Proxies) Client(peer netip.Addr, h http.Header) netip.Addr {
	peer = peer.Unmap().WithZone("")
	if !p.Trusted(peer) {
		return peer
	}
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		return p.walk(peer, splitList(xff), parseHop)
	}
	if fwd := h.Values("Forwarded"); len(fwd) > 0 {
		return p.walk(peer, splitList(fwd), forwardedFor)
	}
	return peer
}

// walk goes from the right-most hop leftwards, past trusted proxies, to
// the first address that is not one.
func (p Proxies) walk(peer netip.Addr, hops []string, parse func(string) (netip.Addr, bool)) netip.Addr {
	last := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parse(hops[i])
		if !ok {
			// A trusted proxy wrote this hop, or the client did and
			// a proxy kept it: either way nothing here can be believed
			// further, and the nearest proxy believed is the client.
			return last
		}
		if !p.Trusted(a) {
			return a
		}
		last = a
	}
	return last
}

// splitList joins repeated headers (in order, as proxies append) and splits
// the comma-separated elements.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

// parseHop reads one X-Forwarded-For entry: an address, with or without a
// port ("192.0.2.1:4711", "[2001:db8::1]:80").
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return parseHop(s[1 : len(s)-1])
	}
	return netip.Addr{}, false
}

// forwardedFor reads the for= parameter of one Forwarded element (RFC
// 7239: `for=192.0.2.60;proto=http`, `for="[2001:db8::17]:4711"`). An
// element without one, or with "unknown" or an obfuscated name, is not
// an address.
func forwardedFor(element string) (netip.Addr, bool) {
	for _, pair := range strings.Split(element, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "for") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		return parseHop(v)
	}
	return netip.Addr{}, false
}

// Wrap sets each request's RemoteAddr to its client address (with port 0
// when it came from a header) before next sees it. With no trusted proxy
// it returns next itself.
func (p Proxies) Wrap(next http.Handler) http.Handler {
	if p.Empty() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !p.Trusted(peer.Addr()) {
			next.ServeHTTP(w, r)
			return
		}
		client := p.Client(peer.Addr(), r.Header)
		if client != peer.Addr().Unmap().WithZone("") {
			r = r.WithContext(r.Context()) // a shallow copy: the caller's request stays as it was
			r.RemoteAddr = netip.AddrPortFrom(client, 0).String()
		}
		next.ServeHTTP(w, r)
	})
}
