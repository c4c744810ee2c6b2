package app_test

import (
	"io"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

func TestListingsAndLookupsGiveNothingAway(t *testing.T) {
	const rootToken = "root-token-for-probing-tests"
	g := testkit.Start(t, testkit.WithRootToken(rootToken),
		testkit.WithUsers(config.SeedUser{Username: "u", Password: "u-password", Role: "user", Group: "default"}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "u", Key: "sk-probing-test-key"}))
	cases := []struct {
		name, path, bearer string
		status             int
		body               string
	}{
		{"a huge page of tasks is bad input", "/api/tasks?page=9223372036854775807", rootToken, 400, `"page must be at most 1000000"`},
		{"a huge page of users is bad input", "/api/users?page=9223372036854775807", rootToken, 400, `page must be at most 1000000`},
		{"a huge page of the caller's tasks is bad input", "/v1/tasks?page=9223372036854775807", "sk-probing-test-key", 400, `page must be at most 1000000`},
		// The task service answers another user's task id with these very words.
		{"an unknown response id", "/v1/responses/resp_unknown", "sk-probing-test-key", 404,
			`{"error":{"message":"Response with id 'resp_unknown' not found.","type":"invalid_request_error","param":"response_id","code":"not_found"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := g.DoRaw(t, "GET", tc.path, tc.bearer, nil)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(raw), tc.body) {
				t.Fatalf("status %d %s, want %d with %s", resp.StatusCode, raw, tc.status, tc.body)
			}
		})
	}
}
