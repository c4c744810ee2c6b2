package loadtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// With -upstream-h2c both targets speak h2c to an upstream that accepts
// nothing else; without it the bare proxy speaks HTTP/1.1 and the bench
// channel carries no protocol setting.
func TestUpstreamH2CSetsBothTargetsToH2C(t *testing.T) {
	cases := []struct {
		name     string
		env      string
		h2cOnly  bool
		wantCode int
		wantSet  bool
	}{
		{"h2c run, h2c-only upstream", "1", true, http.StatusOK, true},
		{"default run, HTTP/1 upstream", "", false, http.StatusOK, false},
		{"default run, h2c-only upstream", "", true, http.StatusBadGateway, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(H2CEnv, tc.env)
			var proto int
			fake := NewUpstream(2, 0).Handler()
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				proto = r.ProtoMajor
				fake.ServeHTTP(w, r)
			}))
			if tc.h2cOnly {
				h2cOnlyServer(up.Config)
			}
			up.Start()
			defer up.Close()
			u, _ := url.Parse(up.URL)
			proxy := httptest.NewServer(NewBaselineProxy(u))
			defer proxy.Close()
			resp, err := http.Post(proxy.URL+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"bench-model","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("proxy answered %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if tc.wantCode == http.StatusOK && (proto == 2) != tc.wantSet {
				t.Fatalf("upstream saw HTTP/%d", proto)
			}
			settings := BareGatewayConfig(t.TempDir(), up.URL).Seed.Channels[0].Settings
			if got := settings["http2"] == "prior_knowledge"; got != tc.wantSet {
				t.Fatalf("bench channel settings %v, want http2 set: %v", settings, tc.wantSet)
			}
		})
	}
}
