package accounts_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// startLink sends GET /api/auth/oidc/link in session with extra headers.
func startLink(t *testing.T, g *testkit.Gateway, session *http.Cookie, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/api/auth/oidc/link", nil)
	req.AddCookie(session)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// A link started from another site would link the victim's account to
// whoever is signed in at the provider in that browser (the attacker, in a
// login-CSRF): it is refused, and a link asks the provider for a fresh
// sign-in (CONTRACT §17).
func TestALinkStartedFromAnotherSiteIsRefusedAndAskedForAFreshSignIn(t *testing.T) {
	p := newFakeProvider(t)
	g := startLinkGateway(t, p)
	alice := g.Login(t, "alice", "alice-password")
	host := g.URL[len("http://"):]
	cases := []struct {
		name   string
		header map[string]string
		status int
	}{
		{"a cross-site navigation", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"a same-site page on another port", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"a foreign Origin", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"an opaque Origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"the console's own page", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + host}, http.StatusFound},
		{"a typed address", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusFound},
		{"a client that says nothing", nil, http.StatusFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := startLink(t, g, alice, tc.header)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status != http.StatusFound {
				return
			}
			to, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || to.Query().Get("prompt") != "login" {
				t.Fatalf("the link goes to %q without prompt=login", resp.Header.Get("Location"))
			}
		})
	}
	// A plain sign-in does not force the provider to ask again.
	start := call(t, g, "GET", "/api/auth/oidc/login", nil, "")
	if to, _ := url.Parse(start.resp.Header.Get("Location")); to == nil || to.Query().Has("prompt") {
		t.Fatalf("sign-in goes to %q", start.resp.Header.Get("Location"))
	}
}

// An account made by an OpenID Connect sign-in has no password: removing
// its link would strand it, so it is refused until it has one.
func TestAnAccountWhoseOnlySignInIsItsLinkCannotUnlinkIt(t *testing.T) {
	p := newFakeProvider(t)
	g := startOIDC(t, p, true)
	in := signIn(t, g, p, false)
	if in.status != http.StatusFound || in.session() == nil {
		t.Fatalf("sign-in: %d %s", in.status, in.raw)
	}
	a := call(t, g, "DELETE", "/api/auth/oidc/link", nil, "", in.session())
	if a.status != http.StatusConflict {
		t.Fatalf("unlinking the only sign-in: %d %s", a.status, a.raw)
	}
	if again := signIn(t, g, p, false); again.status != http.StatusFound || again.session() == nil {
		t.Fatalf("the account can no longer sign in: %d %s", again.status, again.raw)
	}
	me := call(t, g, "GET", "/api/auth/me", nil, "", in.session())
	id := num(me.body["id"])
	if set := call(t, g, "PATCH", "/api/users/"+itoa(id), map[string]any{"password": "a-password-of-its-own"}, rootToken); set.status != http.StatusOK {
		t.Fatalf("setting a password: %d %s", set.status, set.raw)
	}
	fresh := signIn(t, g, p, false).session()
	if a := call(t, g, "DELETE", "/api/auth/oidc/link", nil, "", fresh); a.status != http.StatusOK {
		t.Fatalf("unlink with a password of its own: %d %s", a.status, a.raw)
	}
}
