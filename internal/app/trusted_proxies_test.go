package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const proxyRootToken = "trusted-proxies-root-token-0123456789"

// proxiedLogin signs in from behind a proxy that says the client is xff.
func proxiedLogin(t *testing.T, g *testkit.Gateway, xff, user, password string) int {
	t.Helper()
	body := fmt.Sprintf(`{"username":%q,"password":%q}`, user, password)
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/auth/login", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", xff)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Behind a trusted proxy, one guessing client spends its own sign-in
// budget, not everyone's; the audit log records the client, not the proxy.
// From a peer that is not trusted, the header changes nothing.
func TestSignInBehindATrustedProxyCountsTheClientNotTheProxy(t *testing.T) {
	cases := []struct {
		name       string
		trusted    []string
		otherPass  bool   // whether another client still signs in
		wantClient string // the audit row's client_ip
	}{
		{"a trusted proxy", []string{"127.0.0.0/8", "::1"}, true, "198.51.100.20"},
		{"no trusted proxy", nil, false, "127.0.0.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := testkit.Start(t, testkit.WithRootToken(proxyRootToken), func(c *config.Config) { c.TrustedProxies = tc.trusted })
			// 50 wrong guesses over many accounts from one client use up
			// that address's budget.
			for i := range 50 {
				if code := proxiedLogin(t, g, "1.1.1.1, 198.51.100.10", fmt.Sprintf("nobody-%d", i), "wrong-password"); code != 401 {
					t.Fatalf("guess %d: %d", i, code)
				}
			}
			if code := proxiedLogin(t, g, "198.51.100.10", "nobody-x", "wrong-password"); code != 429 {
				t.Fatalf("the guessing client's 51st guess: %d, want 429", code)
			}
			code := proxiedLogin(t, g, "198.51.100.20", "root", testkit.DefaultRootPassword)
			if got := code == 200; got != tc.otherPass {
				t.Fatalf("another client signing in: %d", code)
			}
			status, list := g.Do(t, "GET", "/api/audit?path=/api/auth/login", proxyRootToken, nil)
			items, _ := list["items"].([]any)
			if status != 200 || len(items) == 0 {
				t.Fatalf("audit: %d %v", status, list)
			}
			if ip := items[0].(map[string]any)["client_ip"]; ip != tc.wantClient {
				t.Fatalf("the newest sign-in's audit row has client_ip %v, want %s", ip, tc.wantClient)
			}
		})
	}
}
