package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// Every /api error, whichever package serves the route (users, task
// plugins, tasks, the cross-origin guard), answers one shape,
// {"error":{"code","message"}}, as application/json that is never cached.
func TestEveryAPIErrorAnswersTheSameJSONShape(t *testing.T) {
	const rootToken = "root-token-for-api-error-tests"
	g := testkit.Start(t, testkit.WithRootToken(rootToken),
		testkit.WithUsers(config.SeedUser{Username: "ada", Password: "ada-password", Role: "admin", Group: "default"}))
	cookie := g.Login(t, "ada", "ada-password")
	cases := []struct {
		name, method, path, body, contentType string
		cookie                                bool
		status                                int
		code                                  string
	}{
		{"admin: an unknown user", "GET", "/api/users/987654", "", "", false, 404, "not_found"},
		{"task plugins: an unknown plugin", "GET", "/api/plugin/task/no-such-plugin", "", "", false, 404, "not_found"},
		{"tasks: a bad status filter", "GET", "/api/tasks?status=bogus", "", "", false, 400, "invalid_status"},
		{"cross-origin guard: a cookie write that is not JSON", "POST", "/api/tokens", "name=x", "text/plain", true, 415, "unsupported_media_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, g.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.cookie {
				req.AddCookie(cookie)
			} else {
				req.Header.Set("Authorization", "Bearer "+rootToken)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("status %d headers %v body %s", resp.StatusCode, resp.Header, raw)
			}
			var body map[string]map[string]any
			if err := json.Unmarshal(raw, &body); err != nil || len(body) != 1 {
				t.Fatalf("body %s is not one error object: %v", raw, err)
			}
			e := body["error"]
			msg, _ := e["message"].(string)
			if e["code"] != tc.code || msg == "" || len(e) != 2 {
				t.Fatalf("error %v, want exactly code %q and a message", e, tc.code)
			}
		})
	}
}
