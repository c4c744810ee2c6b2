package admin

import (
	"strings"
	"testing"
)

// TestBadInputIsNeverA500 sends malformed bodies to every endpoint that
// reads one: each must be refused with a 4xx in the contract's error shape.
func TestBadInputIsNeverA500(t *testing.T) {
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", `{"name":"c","type":1}`)
	if r.status != 200 {
		t.Fatalf("fixture channel: %d", r.status)
	}
	e.ids["ch"] = int64(r.body["id"].(float64))
	e.createKey("alice", "k", `{"name":"k"}`)
	endpoints := []struct{ method, path string }{
		{"POST", "/api/auth/login"},
		{"POST", "/api/users"},
		{"PATCH", "/api/users/{bob}"},
		{"POST", "/api/users/{bob}/quota"},
		{"POST", "/api/tokens"},
		{"PATCH", "/api/tokens/{k}"},
		{"POST", "/api/channels"},
		{"PATCH", "/api/channels/{ch}"},
		{"PUT", "/api/models/m"},
		{"PUT", "/api/groups/g"},
	}
	bodies := map[string]string{
		"empty":            " ",
		"array":            `[1,2]`,
		"string":           `"x"`,
		"truncated":        `{"name":`,
		"unknown member":   `{"no_such_member":1}`,
		"null members":     `{"name":null,"quota":null,"delta":null,"ratio":null,"username":null}`,
		"wrong types":      `{"name":{},"quota":"1","delta":[],"ratio":"x","username":false,"type":{}}`,
		"huge number":      `{"quota":1e400,"delta":99999999999999999999,"ratio":1e999,"priority":1e30}`,
		"trailing garbage": `{} x`,
		"oversized":        `{"name":"` + strings.Repeat("a", maxBody+10) + `"}`,
	}
	for _, ep := range endpoints {
		for name, body := range bodies {
			r := e.do("root", ep.method, ep.path, body)
			if r.status < 400 || r.status >= 500 {
				t.Errorf("%s %s with %s body: status %d, body %.200s", ep.method, ep.path, name, r.status, r.raw)
				continue
			}
			assertErrorShape(t, r)
		}
	}
}

// TestHugePagesAreBadInput: a page number whose offset does not fit in an
// integer is the client's mistake, not a server failure.
func TestHugePagesAreBadInput(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/api/users", "/api/tokens", "/api/channels", "/api/logs", "/api/ledger"} {
		for _, page := range []string{"9223372036854775807", "4611686018427387904", "1000001"} {
			t.Run(path+"?page="+page, func(t *testing.T) {
				r := e.do("root", "GET", path+"?page="+page+"&page_size=1000", "")
				if r.status != 400 || !strings.Contains(r.raw, "page") {
					t.Fatalf("status %d %s, want a 400 naming page", r.status, r.raw)
				}
			})
		}
	}
}
