package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// TestEveryAPIErrorRendererAnswersTheSameJSON drives each handler family that
// answers /api errors (admin, task plugin admin, the task list, the
// cross-origin guard) through the running gateway, and requires one wire
// form: the envelope {"error":{"code","message"}} and nothing else, the same
// headers, and the bytes the one encoder produces for that envelope.
func TestEveryAPIErrorRendererAnswersTheSameJSON(t *testing.T) {
	g := testkit.Start(t, testkit.WithRootToken("root-token-for-api-error-tests"))
	cases := []struct {
		name, method, path string
		header             map[string]string
		status             int
		code               string
	}{
		{"admin", "GET", "/api/users", nil, http.StatusUnauthorized, "unauthorized"},
		{"task plugin admin", "GET", "/api/plugin/task", nil, http.StatusUnauthorized, "unauthorized"},
		{"task list", "GET", "/api/tasks", nil, http.StatusUnauthorized, "unauthorized"},
		{"cross-origin guard", "POST", "/api/tokens", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", "Content-Type": "application/json"},
			http.StatusForbidden, "cross_origin_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, g.URL+c.path, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, c.status, raw)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			var env struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&env); err != nil {
				t.Fatalf("body %q is not the /api envelope: %v", raw, err)
			}
			if env.Error.Code != c.code || env.Error.Message == "" {
				t.Fatalf("envelope %+v, want code %q and a message", env.Error, c.code)
			}
			canonical, _ := json.Marshal(env)
			if want := string(canonical) + "\n"; string(raw) != want {
				t.Errorf("body %q, want the one encoder's %q", raw, want)
			}
		})
	}
}
