// Package guardfetch reads a document an administrator names by address (a
// price catalogue): http or https only, a bounded size, a bounded number of
// redirects, and never a loopback, private, link-local or other internal
// address — checked on the address given, on every redirect and on the
// address actually connected to, so a name that changes what it resolves
// to between check and dial is still refused — unless private content is
// allowed (allow_private_content).
package guardfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// maxRedirects bounds the redirects one fetch follows.
const maxRedirects = 5

// defaultTimeout bounds a whole fetch when the base client sets none.
const defaultTimeout = 30 * time.Second

// ErrBlocked is a fetch refused for where it would go.
var ErrBlocked = errors.New("address refused")

// Fetcher fetches documents under the guard.
type Fetcher struct {
	client       *http.Client
	allowPrivate bool
	lookup       func(ctx context.Context, host string) ([]netip.Addr, error)
}

// New returns a fetcher built on base's transport (nil: the default one);
// allowPrivate lets it reach internal addresses.
func New(base *http.Client, allowPrivate bool) *Fetcher {
	f := &Fetcher{allowPrivate: allowPrivate, lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}}
	c := http.Client{Timeout: defaultTimeout}
	if base != nil {
		c = *base
		if c.Timeout == 0 {
			c.Timeout = defaultTimeout
		}
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return errors.New("too many redirects")
		}
		return f.check(req.Context(), req.URL)
	}
	if !allowPrivate {
		tr, _ := c.Transport.(*http.Transport)
		if tr == nil {
			tr, _ = http.DefaultTransport.(*http.Transport)
		}
		tr = tr.Clone()
		// Connect directly: through a proxy the dial check would see the
		// proxy's address, not the target's.
		tr.Proxy = nil
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
		}
		tr.DialContext = guardDial(dial)
		c.Transport = tr
	}
	f.client = &c
	return f
}

// Get reads address's 200 body of at most max bytes.
func (f *Fetcher) Get(ctx context.Context, address string, max int64) ([]byte, error) {
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("%w: not an http(s) address", ErrBlocked)
	}
	if err := f.check(ctx, u); err != nil {
		return nil, err
	}
	if u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("%w: the address must name a host and carry no credentials", ErrBlocked)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the address
		}
		return nil, err
	}
	return ReadOK(resp, max)
}

// ReadOK reads a fetched document: a 200 answer of at most max bytes, whose
// body it closes.
func ReadOK(resp *http.Response, max int64) ([]byte, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}

// check decides one address, the first or a redirect's.
func (f *Fetcher) check(ctx context.Context, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: only http and https are fetched", ErrBlocked)
	}
	if f.allowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return blocked(host)
	} else if found, err := f.lookup(ctx, host); err == nil {
		addrs = found
	}
	for _, a := range addrs {
		if PrivateAddr(a) {
			return blocked(host)
		}
	}
	return nil
}

func blocked(host string) error {
	return fmt.Errorf("%w: %s is a private address (allow_private_content is off)", ErrBlocked, host)
}

// guardDial refuses a connection that reached a private address.
func guardDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if ap, perr := netip.ParseAddrPort(conn.RemoteAddr().String()); perr == nil && PrivateAddr(ap.Addr()) {
			conn.Close()
			return nil, blocked(addr)
		}
		return conn, nil
	}
}
