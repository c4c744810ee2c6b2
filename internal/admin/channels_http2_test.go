package admin

import (
	"fmt"
	"strings"
	"testing"
)

// settings.http2 takes one value, and only on a channel whose address is
// http://; anything else is refused naming the setting and what to write.
func TestChannelHTTP2SettingIsCheckedAgainstItsValueAndAddress(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"prior knowledge on an http address", `{"name":"h2c","type":"openai","key":"sk-a","base_url":"http://10.0.0.5:8000","models":["m"],"settings":{"http2":"prior_knowledge"}}`,
			200, ""},
		{"an unknown value", `{"name":"x1","type":"openai","key":"sk-a","base_url":"http://10.0.0.5:8000","settings":{"http2":"yes"}}`,
			400, `settings.http2 must be "prior_knowledge" (HTTP/2 without TLS to an http:// base_url) or left out`},
		{"a boolean", `{"name":"x2","type":"openai","key":"sk-a","base_url":"http://10.0.0.5:8000","settings":{"http2":true}}`,
			400, `settings.http2 must be "prior_knowledge"`},
		{"an https address", `{"name":"x3","type":"openai","key":"sk-a","base_url":"https://api.example.com","settings":{"http2":"prior_knowledge"}}`,
			400, `settings.http2 "prior_knowledge" needs an http:// base_url`},
		{"the provider's default address", `{"name":"x4","type":"openai","key":"sk-a","settings":{"http2":"prior_knowledge"}}`,
			400, `needs an http:// base_url`},
	}
	e := newEnv(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("admin", "POST", "/api/channels", tc.body)
			if r.status != tc.status || !strings.Contains(fmt.Sprint(lookup(r.body, "error.message")), tc.want) {
				t.Fatalf("status %d %s, want %d saying %q", r.status, r.raw, tc.status, tc.want)
			}
		})
	}
}
