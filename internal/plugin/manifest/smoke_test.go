package manifest

import "testing"

func TestBaseManifestIsValid(t *testing.T) {
	runCases(t, []ruleCase{{name: "base", check: func(t *testing.T, m *Manifest) {
		if m.Auth.Type != AuthAPIKey || m.Upstreams[0] != UpstreamVendor || m.SubmitResponseTypes[0] != "json" {
			t.Errorf("defaults not applied: %+v", m)
		}
	}}})
}
