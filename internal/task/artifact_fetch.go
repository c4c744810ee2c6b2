package task

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// maxContentRedirects bounds the redirects of one content request.
const maxContentRedirects = 5

// contentRequestHeaders are the client headers passed to the plugin and on
// to the upstream: ranges and validators, nothing that identifies the caller.
var contentRequestHeaders = []string{"Range", "If-Range", "If-None-Match", "If-Modified-Since"}

// contentResponseHeaders are the upstream headers relayed to the client.
var contentResponseHeaders = []string{"Content-Type", "Content-Length", "Content-Range", "Accept-Ranges",
	"ETag", "Last-Modified", "Cache-Control"}

// contentContext is the content context of PLUGIN-CONTEXT.md: the query
// context's fetch fields, the artifact context and the request facts.
func contentContext(t *Task, ch *store.Channel, l *plugin.Loaded, cr credentials, key string, r *http.Request) map[string]any {
	m := batchContext(nil, ch, l, cr)
	delete(m, "tasks")
	for k, v := range artifactContext(t) {
		m[k] = v
	}
	method := http.MethodGet
	if r.Method == http.MethodHead {
		method = http.MethodHead
	}
	m["artifactKey"] = key
	m["upstreamTaskId"] = t.UpstreamID
	m["clientRequest"] = map[string]any{"method": method, "headers": safeClientHeaders(r.Header)}
	return m
}

func safeClientHeaders(h http.Header) map[string]any {
	out := map[string]any{}
	for _, name := range contentRequestHeaders {
		if v := h.Get(name); v != "" && !strings.ContainsAny(v, "\r\n\x00") {
			out[name] = v
		}
	}
	return out
}

// contentDescriptor is a validated buildContentRequest answer.
type contentDescriptor struct {
	*Descriptor
	credentialless bool
	// policy is what a credentialed request and its redirects may reach.
	policy hostPolicy
}

// parseContentDescriptor validates a content descriptor. A credentialed
// one follows the submit rules (channel host or allowedHosts); a
// credentialless one may go anywhere public but only as a bare GET or HEAD.
func parseContentDescriptor(v any, pol hostPolicy) (*contentDescriptor, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, descErr("the hook must return an object {url, method?, headers?, credentialless?}")
	}
	cl, _ := m["credentialless"].(bool)
	if m["method"] == nil {
		// Content is fetched, never submitted: GET unless the hook says.
		m = maps.Clone(m)
		m["method"] = http.MethodGet
	}
	if !cl {
		d, err := parseDescriptor(m, pol)
		if err != nil {
			return nil, err
		}
		if d.Method != http.MethodGet && d.Method != http.MethodHead {
			return nil, descErr("a content request must use GET or HEAD")
		}
		return &contentDescriptor{Descriptor: d, policy: pol}, nil
	}
	if h, ok := m["headers"].(map[string]any); ok && len(h) > 0 {
		return nil, descErr("a credentialless content request must not set headers")
	}
	if b, ok := m["body"]; ok && b != nil {
		return nil, descErr("a credentialless content request must not have a body")
	}
	bare := map[string]any{"url": m["url"], "method": m["method"]}
	open := hostPolicy{}
	raw, _ := m["url"].(string)
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		open.channel = u
	}
	d, err := parseDescriptor(bare, open)
	if err != nil {
		return nil, err
	}
	if d.Method != http.MethodGet && d.Method != http.MethodHead {
		return nil, descErr("a credentialless content request must use GET or HEAD")
	}
	return &contentDescriptor{Descriptor: d, credentialless: true, policy: pol}, nil
}

// relayContent sends a content request and streams the answer: 200, 206,
// 304 and 416 with the safe headers; anything else is an error.
func (s *Service) relayContent(w http.ResponseWriter, r *http.Request, cd *contentDescriptor, secrets []string) error {
	req, err := http.NewRequestWithContext(r.Context(), cd.Method, cd.URL.String(), nil)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "content_failed", Message: "the content request cannot be built"}
	}
	if !cd.credentialless {
		for k, v := range cd.Headers {
			req.Header.Set(k, v)
		}
	}
	for _, name := range contentRequestHeaders {
		if v := r.Header.Get(name); v != "" && req.Header.Get(name) == "" {
			req.Header.Set(name, v)
		}
	}
	resp, err := s.contentClient(cd).Do(req)
	if err != nil {
		return contentTransportError(err, secrets)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent, http.StatusNotModified, http.StatusRequestedRangeNotSatisfiable:
	case http.StatusNotFound, http.StatusGone:
		return &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "artifact_not_found", Message: "the upstream no longer has this artifact"}
	default:
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_error",
			Message: fmt.Sprintf("the upstream answered the content request with HTTP %d", resp.StatusCode)}
	}
	for _, name := range contentResponseHeaders {
		if v := resp.Header.Get(name); v != "" {
			w.Header().Set(name, v)
		}
	}
	setArtifactSafety(w.Header())
	w.WriteHeader(resp.StatusCode)
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, resp.Body)
	}
	return nil
}

// errBlockedAddress is a content request (or one of its redirects) aimed
// where the host may not go.
type errBlockedAddress struct{ msg string }

func (e *errBlockedAddress) Error() string { return e.msg }

func contentTransportError(err error, secrets []string) error {
	var blocked *errBlockedAddress
	if errors.As(err, &blocked) {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "content_blocked", Message: scrub(blocked.msg, secrets...)}
	}
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_error", Message: "the artifact's upstream cannot be reached"}
}

// contentClient is the service client with every redirect checked: a
// credentialed request stays within the host policy, a credentialless one
// away from private addresses, also at dial time against DNS rebinding.
func (s *Service) contentClient(cd *contentDescriptor) *http.Client {
	c := *s.client
	g := s.guardFor(cd)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxContentRedirects {
			return &errBlockedAddress{"the content request was redirected too many times"}
		}
		return g.checkURL(req.Context(), req.URL)
	}
	if !cd.credentialless {
		return &c
	}
	if err := g.checkURL(context.Background(), cd.URL); err != nil {
		c.Transport = refuseTransport{err}
		return &c
	}
	if tr, ok := transportOf(s.client).(*http.Transport); ok && !g.allowPrivate {
		tr = tr.Clone()
		// Guarded fetches connect directly, never through HTTP(S)_PROXY:
		// through a proxy the dial-time check would see the proxy's address,
		// not the target's, and the proxy would resolve the name again.
		tr.Proxy = nil
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		tr.DialContext = g.guardDial(dial)
		c.Transport = tr
	}
	return &c
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// refuseTransport fails every request with the same reason; it lets a
// refused first address surface through the ordinary error path.
type refuseTransport struct{ err error }

func (t refuseTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, t.err }

// addressGuard is where one content request may go.
type addressGuard struct {
	credentialless bool
	policy         hostPolicy
	allowPrivate   bool
	// channelHostPort is the channel's own host:port, reachable even when
	// it is a private address (a self-hosted vendor).
	channelHostPort string
	lookup          func(ctx context.Context, host string) ([]netip.Addr, error)
}

func (s *Service) guardFor(cd *contentDescriptor) addressGuard {
	g := addressGuard{credentialless: cd.credentialless, policy: cd.policy, allowPrivate: s.opts.AllowPrivateContent, lookup: lookupHost}
	if cd.policy.channel != nil && cd.policy.channel.Host != "" {
		g.channelHostPort = hostPort(cd.policy.channel)
	}
	return g
}

func lookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkURL decides one address (the first or a redirect target).
func (g addressGuard) checkURL(ctx context.Context, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &errBlockedAddress{"content requests may only use http or https"}
	}
	if !g.credentialless {
		if !g.policy.allows(u) {
			return &errBlockedAddress{fmt.Sprintf("the content request may not reach %s: neither the channel's host nor in meta.allowedHosts", hostPort(u))}
		}
		return nil
	}
	if g.allowPrivate || hostPort(u) == g.channelHostPort {
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
		if privateAddr(a) {
			return blockedPrivate(u)
		}
	}
	return nil
}

func blockedPrivate(u *url.URL) error {
	return &errBlockedAddress{fmt.Sprintf("the content request may not reach the private address %s", hostPort(u))}
}

// guardDial checks the address actually connected to, so a name that
// resolves to a public address at check time and a private one at dial
// time is still refused.
func (g addressGuard) guardDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(addr, g.channelHostPort) {
			return conn, nil
		}
		if ap, perr := netip.ParseAddrPort(conn.RemoteAddr().String()); perr == nil && privateAddr(ap.Addr()) {
			conn.Close()
			return nil, &errBlockedAddress{fmt.Sprintf("the content request may not reach the private address %s", addr)}
		}
		return conn, nil
	}
}
