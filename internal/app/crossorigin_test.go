package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// browserRequest is a request as a browser would send it: headers set by
// the page (content type) and by the browser itself (Origin, Sec-Fetch-Site).
type browserRequest struct {
	method, path, body string
	contentType        string
	origin, fetchSite  string
	cookie, bearer     bool
}

func (b browserRequest) send(t *testing.T, g *testkit.Gateway, cookie *http.Cookie, rootToken string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(b.method, g.URL+b.path, strings.NewReader(b.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": b.contentType, "Origin": b.origin, "Sec-Fetch-Site": b.fetchSite} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if b.cookie {
		req.AddCookie(cookie)
	}
	if b.bearer {
		req.Header.Set("Authorization", "Bearer "+rootToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func TestCookieWritesComeOnlyFromTheGatewaysOwnPages(t *testing.T) {
	const rootToken = "root-token-for-cross-origin-tests"
	g := testkit.Start(t, testkit.WithRootToken(rootToken),
		testkit.WithUsers(config.SeedUser{Username: "ada", Password: "ada-pass", Role: "admin", Group: "default"}))
	cookie := g.Login(t, "ada", "ada-pass")
	self := g.URL
	// A page served on another port of the same host: the same "site" as far
	// as SameSite cookies go, so the browser sends the cookie.
	evil := strings.Replace(g.URL, "127.0.0.1", "localhost", 1)
	newKey := func(name string) string { return `{"name":"` + name + `","key":"sk-attacker-chosen-key"}` }
	cases := []struct {
		name   string
		req    browserRequest
		status int
		code   string
	}{
		{"a text/plain post from a page on another port is refused",
			browserRequest{method: "POST", path: "/api/tokens", body: newKey("csrf1"), contentType: "text/plain", origin: evil, fetchSite: "same-site", cookie: true},
			403, "cross_origin_request"},
		{"a JSON post from another origin is refused even when the browser sends no Sec-Fetch-Site",
			browserRequest{method: "POST", path: "/api/tokens", body: newKey("csrf2"), contentType: "application/json", origin: evil, cookie: true},
			403, "cross_origin_request"},
		{"a cookie post that is not JSON is refused",
			browserRequest{method: "POST", path: "/api/tokens", body: newKey("csrf3"), contentType: "text/plain", cookie: true},
			415, "unsupported_media_type"},
		{"a form post is refused",
			browserRequest{method: "POST", path: "/api/tokens", body: "name=csrf4", contentType: "application/x-www-form-urlencoded", cookie: true},
			415, "unsupported_media_type"},
		{"the playground refuses other origins too",
			browserRequest{method: "POST", path: "/pg/chat/completions", body: `{"model":"m","messages":[]}`, contentType: "text/plain", origin: evil, fetchSite: "cross-site", cookie: true},
			403, "cross_origin_request"},
		{"signing in from another origin is refused",
			browserRequest{method: "POST", path: "/api/auth/login", body: `{"username":"ada","password":"ada-pass"}`, contentType: "text/plain", origin: evil, fetchSite: "cross-site"},
			403, "cross_origin_request"},
		{"the console's own JSON write passes",
			browserRequest{method: "POST", path: "/api/tokens", body: `{"name":"console-key"}`, contentType: "application/json", origin: self, fetchSite: "same-origin", cookie: true},
			200, ""},
		{"a bodiless write from the console passes",
			browserRequest{method: "DELETE", path: "/api/tokens/999999", origin: self, fetchSite: "same-origin", cookie: true},
			404, "not_found"},
		{"the root token is not a browser credential and is not checked",
			browserRequest{method: "POST", path: "/api/tokens", body: `{"name":"script-key"}`, contentType: "text/plain", origin: evil, fetchSite: "cross-site", bearer: true},
			200, ""},
		{"reads are not checked",
			browserRequest{method: "GET", path: "/api/auth/me", origin: evil, fetchSite: "same-site", cookie: true},
			200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := tc.req.send(t, g, cookie, rootToken)
			if status != tc.status || !strings.Contains(body, tc.code) {
				t.Fatalf("status %d %s, want %d with %q", status, body, tc.status, tc.code)
			}
		})
	}
	// None of the refused requests may have made a key.
	_, list := g.Do(t, "GET", "/api/tokens", rootToken, nil)
	for _, it := range list["items"].([]any) {
		if name := it.(map[string]any)["name"].(string); strings.HasPrefix(name, "csrf") {
			t.Fatalf("a refused request created key %q", name)
		}
	}
}
