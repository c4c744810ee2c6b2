package upstream

import (
	"errors"
	"net/http"
)

// ErrRedirectRefused ends an API call that the upstream answered with a
// redirect. Following it would carry the channel's credentials, and the
// request, past the channel host and allowedHosts policy, possibly to an
// internal address; artifact fetches have their own per-hop checks instead.
var ErrRedirectRefused = errors.New("the upstream answered with a redirect; API calls do not follow redirects")

// NoRedirects returns a copy of c (a zero client when nil) that fails on
// any redirect instead of following it.
func NoRedirects(c *http.Client) *http.Client {
	cp := http.Client{}
	if c != nil {
		cp = *c
	}
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return ErrRedirectRefused }
	return &cp
}
