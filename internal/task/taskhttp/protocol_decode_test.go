package taskhttp

import (
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestCandidateDecodingKeepsOnlyThePluginsWhoseDecoderAccepts(t *testing.T) {
	pe := newProtoEnv(t, "share_a.js", "share_b.js")
	pe.perCall("shared-v")
	va, vb := newJobVendor(t, `{"status":"running"}`), newJobVendor(t, `{"status":"running"}`)
	pe.channel("a", "sharea", va.srv.URL, []string{"shared-v"}, func(c *store.Channel) { c.Priority = 10 })
	pe.channel("b", "shareb", vb.srv.URL, []string{"shared-v"}, nil)

	tests := []struct {
		name     string
		body     string
		status   int
		wantA    int
		wantB    int
		fragment string
	}{
		{"one decoder refuses: the other plugin's channel runs it, though a's has priority", `{"model":"shared-v","prompt":"a dog"}`, 200, 0, 1, ""},
		{"both accept: the priority channel decides the plugin", `{"model":"shared-v","prompt":"a cat"}`, 200, 1, 1, ""},
		{"every decoder refuses: one message per failure with its plugins", `{"model":"shared-v"}`, 400, 1, 1, "prompt is required (sharea, shareb)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := pe.post("/v1/videos", userKey, tc.body)
			if a.status != tc.status {
				t.Fatalf("status = %d %s, want %d", a.status, a.raw, tc.status)
			}
			if got := len(va.received()); got != tc.wantA {
				t.Errorf("vendor a submits = %d, want %d", got, tc.wantA)
			}
			if got := len(vb.received()); got != tc.wantB {
				t.Errorf("vendor b submits = %d, want %d", got, tc.wantB)
			}
			if tc.fragment != "" && !strings.Contains(string(a.raw), tc.fragment) {
				t.Errorf("answer = %s, want it to contain %q", a.raw, tc.fragment)
			}
		})
	}
}

func TestGroupFailuresListsEachMessageOnceWithItsPlugins(t *testing.T) {
	cand := func(key, failure string) *candidate {
		return &candidate{l: &plugin.Loaded{Key: key}, failure: failure}
	}
	tests := []struct {
		name  string
		cands []*candidate
		want  string
	}{
		{"one plugin", []*candidate{cand("a", "bad size")}, "the request was refused: bad size (a)"},
		{"same message", []*candidate{cand("a", "bad size"), cand("b", "bad size")}, "the request was refused: bad size (a, b)"},
		{"different messages keep their order", []*candidate{cand("a", "x"), cand("b", "y"), cand("c", "x")}, "the request was refused: x (a, c); y (b)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := groupFailures(tc.cands); got != tc.want {
				t.Errorf("groupFailures = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAnEligiblePluginWithoutAChannelAnswers503AndSendsNothing(t *testing.T) {
	pe := newProtoEnv(t, "share_a.js", "share_b.js")
	pe.perCall("shared-v")
	v := newJobVendor(t, `{"status":"running"}`)
	pe.channel("a", "sharea", v.srv.URL, []string{"shared-v"}, nil)
	// Only sharea has a channel, and it refuses; shareb accepts but has
	// nowhere to run.
	a := pe.post("/v1/videos", userKey, `{"model":"shared-v","prompt":"a dog"}`)
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("status = %d %s, want 503: the only eligible plugin has no channel", a.status, a.raw)
	}
	if len(v.received()) != 0 {
		t.Errorf("vendor received %v, want nothing", v.received())
	}
}

func TestModelsNoPluginClaimsFallThroughToTheRelay(t *testing.T) {
	pe := newProtoEnv(t, "responses.js", "image_sync.js")
	for _, tc := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"gpt-4o","input":"hi"}`},
		{"/v1/images/generations", `{"model":"dall-e-3","prompt":"x"}`},
		{"/v1/responses", `{"input":"no model"}`},
	} {
		if a := pe.post(tc.path, userKey, tc.body); a.status != relayFallback {
			t.Errorf("%s %s: %d %s, want the relay fallback", tc.path, tc.body, a.status, a.raw)
		}
	}
	if a := pe.get("/v1/responses/resp_upstream123", userKey); a.status != relayFallback {
		t.Errorf("GET of an id the gateway never issued: %d %s, want the relay fallback", a.status, a.raw)
	}
}

func TestARequestFormNoCandidateDeclaredIsRefusedBeforeAnyHookOrReserve(t *testing.T) {
	pe := newProtoEnv(t, "responses_stream.js")
	pe.perCall("resp-s")
	v := newJobVendor(t, `{"status":"done"}`)
	pe.channel("s", "respstream", v.srv.URL, []string{"resp-s"}, nil)
	for _, body := range []string{`{"model":"resp-s","input":"x"}`, `{"model":"resp-s","input":"x","background":true,"stream":true}`} {
		a := pe.post("/v1/responses", userKey, body)
		if a.status != http.StatusBadRequest || !strings.Contains(string(a.raw), "unsupported_mode") {
			t.Errorf("%s: %d %s, want 400 unsupported_mode", body, a.status, a.raw)
		}
	}
	if len(v.received()) != 0 {
		t.Errorf("vendor received %v, want nothing", v.received())
	}
	if got := pe.quota(pe.alice); got != 1_000_000 {
		t.Errorf("quota = %d, want untouched", got)
	}
	if kinds := pe.ledgerKinds(pe.alice); kinds[store.LedgerReserve] != 0 {
		t.Errorf("ledger = %v, want no reservation", kinds)
	}
}

func TestHostProtocolsAuthenticateTheKey(t *testing.T) {
	pe := newProtoEnv(t, "responses.js", "video.js")
	for _, tc := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"resp-1","input":"hi"}`},
		{"/v1/videos", `{"model":"vid-1","prompt":"x"}`},
	} {
		if a := pe.post(tc.path, "sk-wrong", tc.body); a.status != http.StatusUnauthorized {
			t.Errorf("%s with a wrong key: %d %s, want 401", tc.path, a.status, a.raw)
		}
	}
}
