package task

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
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

// relayContent sends a content request and streams the answer: 200, 206,
// 304 and 416 with the safe headers; anything else is an error.
func (s *Service) relayContent(w http.ResponseWriter, r *http.Request, cd *egress.ContentDescriptor, secrets []string) error {
	req, err := http.NewRequestWithContext(r.Context(), cd.Method, cd.URL.String(), nil)
	if err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "content_failed", Message: "the content request cannot be built"}
	}
	if !cd.Credentialless {
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

func contentTransportError(err error, secrets []string) error {
	var blocked *egress.BlockedError
	if errors.As(err, &blocked) {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "content_blocked", Message: scrub(blocked.Error(), secrets...)}
	}
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_error", Message: "the artifact's upstream cannot be reached"}
}

// contentClient is the service client with every redirect checked: a
// credentialed request stays within the host policy, a credentialless one
// away from private addresses, also at dial time against DNS rebinding.
func (s *Service) contentClient(cd *egress.ContentDescriptor) *http.Client {
	c := *s.client
	g := s.guardFor(cd)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxContentRedirects {
			return egress.Blocked("the content request was redirected too many times")
		}
		return g.CheckURL(req.Context(), req.URL)
	}
	if !cd.Credentialless {
		return &c
	}
	if err := g.CheckURL(context.Background(), cd.URL); err != nil {
		c.Transport = refuseTransport{err}
		return &c
	}
	if tr, ok := transportOf(s.client).(*http.Transport); ok && !g.AllowsPrivate() {
		tr = tr.Clone()
		// Guarded fetches connect directly, never through HTTP(S)_PROXY:
		// through a proxy the dial-time check would see the proxy's address,
		// not the target's, and the proxy would resolve the name again.
		tr.Proxy = nil
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		tr.DialContext = g.Dial(dial)
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

func (s *Service) guardFor(cd *egress.ContentDescriptor) egress.Guard {
	return egress.NewGuard(cd, s.opts.AllowPrivateContent)
}
