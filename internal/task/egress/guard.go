package egress

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/guardfetch"
)

// ContentDescriptor is a validated buildContentRequest answer.
type ContentDescriptor struct {
	*Descriptor
	Credentialless bool
	// Policy is what a credentialed request and its redirects may reach.
	Policy Policy
}

// ParseContentDescriptor validates a content descriptor. A credentialed
// one follows the submit rules (channel host or allowedHosts); a
// credentialless one may go anywhere public but only as a bare GET or HEAD.
func ParseContentDescriptor(v any, pol Policy) (*ContentDescriptor, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf("the hook must return an object {url, method?, headers?, credentialless?}")
	}
	cl, _ := m["credentialless"].(bool)
	if m["method"] == nil {
		// Content is fetched, never submitted: GET unless the hook says.
		m = maps.Clone(m)
		m["method"] = http.MethodGet
	}
	if !cl {
		d, err := ParseDescriptor(m, pol)
		if err != nil {
			return nil, err
		}
		if d.Method != http.MethodGet && d.Method != http.MethodHead {
			return nil, Errorf("a content request must use GET or HEAD")
		}
		return &ContentDescriptor{Descriptor: d, Policy: pol}, nil
	}
	if h, ok := m["headers"].(map[string]any); ok && len(h) > 0 {
		return nil, Errorf("a credentialless content request must not set headers")
	}
	if b, ok := m["body"]; ok && b != nil {
		return nil, Errorf("a credentialless content request must not have a body")
	}
	bare := map[string]any{"url": m["url"], "method": m["method"]}
	open := Policy{}
	raw, _ := m["url"].(string)
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		open.Channel = u
	}
	d, err := ParseDescriptor(bare, open)
	if err != nil {
		return nil, err
	}
	if d.Method != http.MethodGet && d.Method != http.MethodHead {
		return nil, Errorf("a credentialless content request must use GET or HEAD")
	}
	return &ContentDescriptor{Descriptor: d, Credentialless: true, Policy: pol}, nil
}

// BlockedError is a content request (or one of its redirects) aimed
// where the host may not go.
type BlockedError struct{ msg string }

func (e *BlockedError) Error() string { return e.msg }

// Blocked is a request the guard refuses, for the given reason.
func Blocked(msg string) error { return &BlockedError{msg} }

// Guard is where one content request may go.
type Guard struct {
	credentialless bool
	policy         Policy
	allowPrivate   bool
	// channelHostPort is the channel's own host:port, reachable even when
	// it is a private address (a self-hosted vendor).
	channelHostPort string
	lookup          func(ctx context.Context, host string) ([]netip.Addr, error)
}

func lookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkURL decides one address (the first or a redirect target).
func (g Guard) CheckURL(ctx context.Context, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &BlockedError{"content requests may only use http or https"}
	}
	if !g.credentialless {
		if !g.policy.allows(u) {
			return &BlockedError{fmt.Sprintf("the content request may not reach %s: neither the channel's host nor in meta.allowedHosts", HostPort(u))}
		}
		return nil
	}
	if g.allowPrivate || HostPort(u) == g.channelHostPort {
		return nil
	}
	host := u.Hostname()
	addrs := []netip.Addr{}
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, a)
	} else if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return blockedPrivate(u)
	} else if found, err := g.lookup(ctx, host); err == nil {
		addrs = found
	}
	for _, a := range addrs {
		if guardfetch.PrivateAddr(a) {
			return blockedPrivate(u)
		}
	}
	return nil
}

func blockedPrivate(u *url.URL) error {
	return &BlockedError{fmt.Sprintf("the content request may not reach the private address %s", HostPort(u))}
}

// Dial checks the address actually connected to, so a name that
// resolves to a public address at check time and a private one at dial
// time is still refused.
func (g Guard) Dial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(addr, g.channelHostPort) {
			return conn, nil
		}
		if ap, perr := netip.ParseAddrPort(conn.RemoteAddr().String()); perr == nil && guardfetch.PrivateAddr(ap.Addr()) {
			conn.Close()
			return nil, &BlockedError{fmt.Sprintf("the content request may not reach the private address %s", addr)}
		}
		return conn, nil
	}
}

// NewGuard is where cd and its redirects may go; allowPrivate lifts the
// private-address rule (ALLOW_PRIVATE_CONTENT).
func NewGuard(cd *ContentDescriptor, allowPrivate bool) Guard {
	g := Guard{credentialless: cd.Credentialless, policy: cd.Policy, allowPrivate: allowPrivate, lookup: lookupHost}
	if cd.Policy.Channel != nil && cd.Policy.Channel.Host != "" {
		g.channelHostPort = HostPort(cd.Policy.Channel)
	}
	return g
}

// AllowsPrivate reports whether the guard lets requests reach private addresses.
func (g Guard) AllowsPrivate() bool { return g.allowPrivate }
