package accounts_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// fakeProvider is an OpenID provider: discovery, a JWKS with an RSA key
// made at test start, and a token endpoint that checks PKCE and answers
// with an ID token the test may spoil.
type fakeProvider struct {
	srv  *httptest.Server
	key  *rsa.PrivateKey
	mu   sync.Mutex
	auth map[string]url.Values // code -> the authorization request
	// spoil changes the claims or the signing key of the next ID token.
	spoil func(claims map[string]any) *rsa.PrivateKey
	sub   string
	name  string
}

func newFakeProvider(t *testing.T) *fakeProvider {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeProvider{key: key, auth: map[string]url.Values{}, sub: "subject-1", name: "oidc-user"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token",
			"jwks_uri": p.srv.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		enc := base64.RawURLEncoding
		json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
			"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": enc.EncodeToString(key.N.Bytes()), "e": enc.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// authorize plays the provider's login page: it records the request and
// returns the code it would send the browser back with.
func (p *fakeProvider) authorize(t *testing.T, location string) (code, state string) {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil || !strings.HasPrefix(location, p.srv.URL+"/authorize") {
		t.Fatalf("redirected to %q", location)
	}
	q := u.Query()
	for _, k := range []string{"state", "nonce", "code_challenge", "client_id", "redirect_uri"} {
		if q.Get(k) == "" {
			t.Fatalf("authorization request without %s: %s", k, location)
		}
	}
	if q.Get("code_challenge_method") != "S256" || !strings.Contains(q.Get("scope"), "openid") {
		t.Fatalf("authorization request: %s", location)
	}
	code = "code-" + q.Get("state")[:8]
	p.mu.Lock()
	p.auth[code] = q
	p.mu.Unlock()
	return code, q.Get("state")
}

func (p *fakeProvider) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	r.ParseForm()
	p.mu.Lock()
	q, ok := p.auth[r.Form.Get("code")]
	delete(p.auth, r.Form.Get("code"))
	spoil := p.spoil
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
	if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
		return
	}
	claims := map[string]any{"iss": p.srv.URL, "sub": p.sub, "aud": "turnpike-client", "exp": time.Now().Add(time.Hour).Unix(),
		"iat": time.Now().Unix(), "nonce": q.Get("nonce"), "preferred_username": p.name}
	key := p.key
	if spoil != nil {
		if k := spoil(claims); k != nil {
			key = k
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "id_token": sign(key, claims)})
}

func sign(key *rsa.PrivateKey, claims map[string]any) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "k1", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sum := sha256.Sum256([]byte(input))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	return input + "." + enc.EncodeToString(sig)
}

func startOIDC(t *testing.T, p *fakeProvider, registration bool) *testkit.Gateway {
	return testkit.Start(t, testkit.WithRootToken(rootToken), testkit.WithConfig(func(c *config.Config) {
		c.OIDC = config.OIDC{Issuer: p.srv.URL, ClientID: "turnpike-client", ClientSecret: "client-secret"}
		c.Registration = config.Registration{Enabled: registration, InitialQuota: 77}
	}))
}

// signIn runs the whole flow and returns the callback's answer.
func signIn(t *testing.T, g *testkit.Gateway, p *fakeProvider, mangleState bool) answer {
	t.Helper()
	start := call(t, g, "GET", "/api/auth/oidc/login", nil, "")
	if start.status != http.StatusFound {
		t.Fatalf("login: %d %s", start.status, start.raw)
	}
	var flow *http.Cookie
	for _, c := range start.resp.Cookies() {
		if c.Name == accounts.OIDCCookie {
			flow = c
		}
	}
	if flow == nil || !flow.HttpOnly {
		t.Fatal("no HttpOnly flow cookie")
	}
	code, state := p.authorize(t, start.resp.Header.Get("Location"))
	if mangleState {
		state = "x" + state
	}
	return call(t, g, "GET", "/api/auth/oidc/callback?code="+url.QueryEscape(code)+"&state="+url.QueryEscape(state), nil, "",
		&http.Cookie{Name: flow.Name, Value: flow.Value})
}

func TestOIDCSignInCreatesTheAccountOnceAndSignsIn(t *testing.T) {
	p := newFakeProvider(t)
	g := startOIDC(t, p, true)
	for i := range 2 {
		a := signIn(t, g, p, false)
		if a.status != http.StatusFound || a.resp.Header.Get("Location") != "/" || a.session() == nil {
			t.Fatalf("sign-in %d: %d %s %s", i, a.status, a.resp.Header.Get("Location"), a.raw)
		}
		me := call(t, g, "GET", "/api/auth/me", nil, "", a.session())
		if me.body["username"] != "oidc-user" || me.body["role"] != "user" || num(me.body["quota"]) != 77 {
			t.Fatalf("me after sign-in %d: %s", i, me.raw)
		}
	}
	users := call(t, g, "GET", "/api/users?page_size=100", nil, rootToken)
	if n := strings.Count(users.raw, `"oidc-user"`); n != 1 {
		t.Fatalf("%d accounts named oidc-user", n)
	}
	audit := call(t, g, "GET", "/api/audit?path=/api/auth/oidc/callback&user=oidc-user", nil, rootToken)
	if num(audit.body["total"]) != 2 || strings.Contains(audit.raw, "code=") {
		t.Fatalf("the sign-ins are not audited as oidc-user (or the query string was kept): %s", audit.raw)
	}
}

func TestOIDCRefusesTamperedAnswers(t *testing.T) {
	p := newFakeProvider(t)
	g := startOIDC(t, p, true)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	cases := []struct {
		name        string
		spoil       func(c map[string]any) *rsa.PrivateKey
		mangleState bool
		status      int
	}{
		{"bad signature", func(map[string]any) *rsa.PrivateKey { return other }, false, 401},
		{"wrong audience", func(c map[string]any) *rsa.PrivateKey { c["aud"] = "someone-else"; return nil }, false, 401},
		{"wrong issuer", func(c map[string]any) *rsa.PrivateKey { c["iss"] = "https://evil.example"; return nil }, false, 401},
		{"expired", func(c map[string]any) *rsa.PrivateKey { c["exp"] = time.Now().Add(-time.Hour).Unix(); return nil }, false, 401},
		{"wrong nonce", func(c map[string]any) *rsa.PrivateKey { c["nonce"] = "replayed"; return nil }, false, 401},
		{"state that was not issued here", nil, true, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.mu.Lock()
			p.spoil = tc.spoil
			p.mu.Unlock()
			a := signIn(t, g, p, tc.mangleState)
			if a.status != tc.status || a.session() != nil {
				t.Fatalf("status %d session %v: %s", a.status, a.session(), a.raw)
			}
		})
	}
	p.spoil = nil
	if _, err := g.App.Store.Users().GetByUsername(t.Context(), "oidc-user"); err == nil {
		t.Fatal("a refused sign-in created the account")
	}
	t.Run("a browser is sent back to the sign-in page", func(t *testing.T) {
		req, _ := http.NewRequest("GET", g.URL+"/api/auth/oidc/callback?state=x&code=y", nil)
		req.Header.Set("Accept", "text/html")
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/login?oidc_error=") {
			t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}

func TestOIDCFirstSignInNeedsRegistration(t *testing.T) {
	p := newFakeProvider(t)
	g := startOIDC(t, p, false)
	if a := signIn(t, g, p, false); a.status != http.StatusForbidden || a.session() != nil {
		t.Fatalf("%d %s", a.status, a.raw)
	}
}

func TestOIDCNeverTakesOverALocalAccountByName(t *testing.T) {
	p := newFakeProvider(t)
	p.name = "root"
	g := startOIDC(t, p, true)
	if a := signIn(t, g, p, false); a.status != http.StatusConflict || a.session() != nil {
		t.Fatalf("%d %s", a.status, a.raw)
	}
}

func TestOIDCIsNotFoundWithoutAnIssuer(t *testing.T) {
	g := testkit.Start(t)
	if a := call(t, g, "GET", "/api/auth/oidc/login", nil, ""); a.status != http.StatusNotFound {
		t.Fatalf("%d", a.status)
	}
}
