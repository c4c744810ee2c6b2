package accounts_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// startLinkGateway has registration off and two local accounts made
// before single sign-on was switched on.
func startLinkGateway(t *testing.T, p *fakeProvider) *testkit.Gateway {
	return testkit.Start(t, testkit.WithRootToken(rootToken),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default"},
			config.SeedUser{Username: "bob", Password: "bob-password", Role: "user", Group: "default"}),
		testkit.WithConfig(func(c *config.Config) {
			c.OIDC = config.OIDC{Issuer: p.srv.URL, ClientID: "turnpike-client", ClientSecret: "client-secret"}
		}))
}

// link starts a link flow in startedBy's session and finishes it at the
// provider and the callback with finishedBy's session (nil: none).
func link(t *testing.T, g *testkit.Gateway, p *fakeProvider, startedBy, finishedBy *http.Cookie) answer {
	t.Helper()
	start := call(t, g, "GET", "/api/auth/oidc/link", nil, "", startedBy)
	if start.status != http.StatusFound {
		t.Fatalf("link start: %d %s", start.status, start.raw)
	}
	var flow *http.Cookie
	for _, c := range start.resp.Cookies() {
		if c.Name == accounts.OIDCCookie {
			flow = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if flow == nil {
		t.Fatal("link start set no flow cookie")
	}
	code, state := p.authorize(t, start.resp.Header.Get("Location"))
	return call(t, g, "GET", "/api/auth/oidc/callback?code="+url.QueryEscape(code)+"&state="+url.QueryEscape(state), nil, "",
		flow, finishedBy)
}

func linked(t *testing.T, g *testkit.Gateway, session *http.Cookie) bool {
	t.Helper()
	a := call(t, g, "GET", "/api/auth/oidc/identity", nil, "", session)
	if a.status != http.StatusOK || a.body["enabled"] != true {
		t.Fatalf("identity: %d %s", a.status, a.raw)
	}
	return a.body["linked"] == true
}

func TestALinkedIdentitySignsInAsItsAccountWithRegistrationOff(t *testing.T) {
	p := newFakeProvider(t) // the provider calls the person "oidc-user", not alice
	g := startLinkGateway(t, p)
	alice := g.Login(t, "alice", "alice-password")
	if a := signIn(t, g, p, false); a.status != http.StatusForbidden {
		t.Fatalf("an unlinked identity signed in with registration off: %d %s", a.status, a.raw)
	}
	if linked(t, g, alice) {
		t.Fatal("linked before any link")
	}
	a := link(t, g, p, alice, alice)
	if a.status != http.StatusFound || a.resp.Header.Get("Location") != "/account?oidc_linked=1" {
		t.Fatalf("link: %d %q %s", a.status, a.resp.Header.Get("Location"), a.raw)
	}
	if !linked(t, g, alice) {
		t.Fatal("the account page does not see the link")
	}
	// Linking the same identity again is harmless.
	if a := link(t, g, p, alice, alice); a.status != http.StatusFound {
		t.Fatalf("second link: %d %s", a.status, a.raw)
	}
	in := signIn(t, g, p, false)
	if in.status != http.StatusFound || in.session() == nil {
		t.Fatalf("sign-in of the linked identity: %d %s", in.status, in.raw)
	}
	me := call(t, g, "GET", "/api/auth/me", nil, "", in.session())
	if me.body["username"] != "alice" {
		t.Fatalf("the linked identity signed in as %v", me.body["username"])
	}
	users := call(t, g, "GET", "/api/users?page_size=100", nil, rootToken)
	if num(users.body["total"]) != 3 {
		t.Fatalf("the sign-in created an account: %s", users.raw)
	}
	audit := call(t, g, "GET", "/api/audit?path=/api/auth/oidc/callback&user=alice", nil, rootToken)
	if num(audit.body["total"]) < 2 {
		t.Fatalf("links and the sign-in are not audited as alice: %s", audit.raw)
	}
}

func TestUnlinkEndsSignInThroughTheProvider(t *testing.T) {
	p := newFakeProvider(t)
	g := startLinkGateway(t, p)
	alice := g.Login(t, "alice", "alice-password")
	if a := call(t, g, "DELETE", "/api/auth/oidc/link", nil, "", alice); a.status != http.StatusNotFound {
		t.Fatalf("unlink without a link: %d %s", a.status, a.raw)
	}
	link(t, g, p, alice, alice)
	if a := call(t, g, "DELETE", "/api/auth/oidc/link", nil, "", alice); a.status != http.StatusOK || a.body["linked"] != false {
		t.Fatalf("unlink: %d %s", a.status, a.raw)
	}
	if linked(t, g, alice) {
		t.Fatal("still linked after unlink")
	}
	if a := signIn(t, g, p, false); a.status != http.StatusForbidden || a.session() != nil {
		t.Fatalf("an unlinked identity still signs in: %d %s", a.status, a.raw)
	}
	// The password still works, and the account can link again.
	g.Login(t, "alice", "alice-password")
	if a := link(t, g, p, alice, alice); a.status != http.StatusFound || !linked(t, g, alice) {
		t.Fatalf("link after unlink: %d %s", a.status, a.raw)
	}
}

func TestALinkIsRefusedWhenTheIdentityOrTheAccountIsLinkedElsewhere(t *testing.T) {
	p := newFakeProvider(t)
	g := startLinkGateway(t, p)
	alice, bob := g.Login(t, "alice", "alice-password"), g.Login(t, "bob", "bob-password")
	link(t, g, p, bob, bob)
	if a := link(t, g, p, alice, alice); a.status != http.StatusConflict || a.body["error"].(map[string]any)["code"] != "identity_linked" {
		t.Fatalf("alice took bob's identity: %d %s", a.status, a.raw)
	}
	if linked(t, g, alice) {
		t.Fatal("alice is linked")
	}
	// Bob, linked already, cannot link a second identity at the provider.
	p.sub = "subject-2"
	if a := link(t, g, p, bob, bob); a.status != http.StatusConflict {
		t.Fatalf("bob linked a second identity: %d %s", a.status, a.raw)
	}
	in := signIn(t, g, p, false)
	if in.status != http.StatusForbidden {
		t.Fatalf("the refused identity signs in: %d %s", in.status, in.raw)
	}
}

func TestALinkFlowIsBoundToTheUserWhoStartedIt(t *testing.T) {
	p := newFakeProvider(t)
	g := startLinkGateway(t, p)
	alice, bob := g.Login(t, "alice", "alice-password"), g.Login(t, "bob", "bob-password")
	cases := []struct {
		name     string
		finisher *http.Cookie
	}{
		{"finished in another user's session", bob},
		{"finished without a session", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := link(t, g, p, alice, tc.finisher)
			if a.status != http.StatusForbidden || a.session() != nil {
				t.Fatalf("%d %s", a.status, a.raw)
			}
			if linked(t, g, alice) || linked(t, g, bob) {
				t.Fatal("a link was made")
			}
		})
	}
}

func TestLinkNeedsASignedInUserAndAConfiguredProvider(t *testing.T) {
	p := newFakeProvider(t)
	g := startLinkGateway(t, p)
	cases := []struct {
		name, method, path, bearer string
		status                     int
	}{
		{"start without a session", "GET", "/api/auth/oidc/link", "", http.StatusUnauthorized},
		{"unlink without a session", "DELETE", "/api/auth/oidc/link", "", http.StatusUnauthorized},
		{"start with the root token", "GET", "/api/auth/oidc/link", rootToken, http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if a := call(t, g, tc.method, tc.path, nil, tc.bearer); a.status != tc.status {
				t.Fatalf("%d %s", a.status, a.raw)
			}
		})
	}
	t.Run("no provider", func(t *testing.T) {
		plain := testkit.Start(t, testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default"}))
		alice := plain.Login(t, "alice", "alice-password")
		if a := call(t, plain, "GET", "/api/auth/oidc/link", nil, "", alice); a.status != http.StatusNotFound {
			t.Fatalf("%d %s", a.status, a.raw)
		}
		if a := call(t, plain, "GET", "/api/auth/oidc/identity", nil, "", alice); a.status != http.StatusOK || a.body["enabled"] != false {
			t.Fatalf("%d %s", a.status, a.raw)
		}
	})
}
