package app_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// An anonymous caller must be refused from its headers alone: a body past
// the size limit answers 401 (in the surface's dialect), not 413, because
// the gateway never starts reading it.
func TestAnonymousOversizedBodiesAreRefusedBeforeTheyAreRead(t *testing.T) {
	g := testkit.Start(t,
		testkit.WithConfig(func(c *config.Config) { c.RequestBodyLimitMB = 1 }),
		testkit.WithUsers(config.SeedUser{Username: "eve", Password: "pw-longer", Role: "user", Group: "default", Quota: 1000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "eve", Key: "sk-eve"}),
	)
	big := bytes.Repeat([]byte("a"), 2<<20)
	cases := []struct {
		name    string
		path    string
		headers map[string]string
		want    int
	}{
		{"chat completions without a key", "/v1/chat/completions", nil, 401},
		{"chat completions with a wrong key", "/v1/chat/completions", map[string]string{"Authorization": "Bearer sk-nobody"}, 401},
		{"messages without a key", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, 401},
		{"messages with a wrong x-api-key", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01", "x-api-key": "sk-nobody"}, 401},
		{"alternate native without a key", "/v1beta/models/m:generateContent", nil, 401},
		{"alternate native streaming without a key", "/v1beta/models/m:streamGenerateContent", nil, 401},
		{"playground without a session", "/pg/chat/completions", nil, 401},
		{"video create without a key", "/v1/videos", nil, 401},
		{"a known key still meets the size limit", "/v1/chat/completions", map[string]string{"Authorization": "Bearer sk-eve"}, 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", g.URL+tc.path, bytes.NewReader(big))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
