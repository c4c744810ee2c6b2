package upstream

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Do sends req as NoRedirects(c).Do(req) would, calling c's transport
// itself. http.Client's own frames (Do, do, send: about 1.1 KB) would lie
// under every call's wait for its upstream, and that wait is the deepest
// moment of a call: past 7.3 KB an 8 KB goroutine stack is doubled, and an
// open stream keeps the doubled stack. What the relay's clients do besides
// the transport is kept: a redirect is refused with ErrRedirectRefused in a
// *url.Error, as is any transport error (cancellation and deadlines are the
// request context's, as with a client without Timeout). A client with a
// cookie jar or a Timeout, and a request of an unusual shape (credentials in
// the address, no header map, a server request's RequestURI), go through
// the client.
func Do(c *http.Client, req *http.Request) (*http.Response, error) {
	if c.Jar != nil || c.Timeout != 0 || req.URL == nil || req.URL.User != nil || req.Header == nil || req.RequestURI != "" {
		return NoRedirects(c).Do(req)
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil || redirects(req, resp) {
		return ended(rt, req, resp, err)
	}
	return resp, nil
}

// redirects reports an answer the client would follow: a 301, 302 or 303,
// or a 307 or 308 unless the request has a body it cannot send again.
func redirects(req *http.Request, resp *http.Response) bool {
	switch resp.StatusCode {
	case 301, 302, 303:
		return true
	case 307, 308:
		return req.GetBody != nil || !hasBody(req)
	}
	return false
}

func hasBody(req *http.Request) bool {
	return req.Body != nil && req.Body != http.NoBody
}

// ended is Do's answer for what is not a plain response, as the client
// gives it; a function of its own so that Do's frame stays small.
func ended(rt http.RoundTripper, req *http.Request, resp *http.Response, err error) (*http.Response, error) {
	switch {
	case err != nil:
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, urlError(req, req.URL.String(), err)
	case resp == nil:
		return nil, urlError(req, req.URL.String(), fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", rt))
	case resp.Body == nil:
		if resp.ContentLength > 0 && req.Method != http.MethodHead {
			return nil, urlError(req, req.URL.String(), fmt.Errorf("http: RoundTripper implementation (%T) returned a *Response with content length %d but a nil Body", rt, resp.ContentLength))
		}
		resp.Body = http.NoBody
		if redirects(req, resp) {
			return refused(req, resp)
		}
		return resp, nil
	}
	return refused(req, resp)
}

// refused ends a redirect as the client does when its CheckRedirect says
// no: an answer without a Location is the answer; otherwise its body is
// drained (a small one, so the connection is reused) and closed, and the
// answer comes back with the refusal.
func refused(req *http.Request, resp *http.Response) (*http.Response, error) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return resp, nil
	}
	closeBody(req)
	if _, err := req.URL.Parse(loc); err != nil {
		_ = resp.Body.Close()
		return nil, urlError(req, answeredURL(req, resp), fmt.Errorf("failed to parse Location header %q: %v", loc, err))
	}
	const drained = 2 << 10
	if resp.ContentLength == -1 || resp.ContentLength <= drained {
		_, _ = io.CopyN(io.Discard, resp.Body, drained)
	}
	_ = resp.Body.Close()
	return resp, urlError(req, loc, ErrRedirectRefused)
}

// answeredURL is the address of the request resp answers, as the client
// names it in an error (it holds no password: Do sends none itself).
func answeredURL(req *http.Request, resp *http.Response) string {
	if resp.Request != nil && resp.Request.URL != nil {
		return resp.Request.URL.String()
	}
	return req.URL.String()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// urlError wraps err as the client does: the operation is the method
// written as a word ("Post").
func urlError(req *http.Request, address string, err error) *url.Error {
	return &url.Error{Op: urlErrorOp(req.Method), URL: address, Err: err}
}

func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	for i := 0; i < len(method); i++ {
		if method[i] >= 0x80 {
			return method
		}
	}
	return method[:1] + strings.ToLower(method[1:])
}
