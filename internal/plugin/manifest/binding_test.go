package manifest

import (
	"slices"
	"testing"
)

func TestUpstreams(t *testing.T) {
	upstreams := func(want ...string) func(*testing.T, *Manifest) {
		return func(t *testing.T, m *Manifest) {
			if !slices.Equal(m.Upstreams, want) {
				t.Errorf("upstreams = %v, want %v", m.Upstreams, want)
			}
		}
	}
	runCases(t, []ruleCase{
		{name: "default vendor", check: upstreams("vendor")},
		{name: "new_api alias", edit: set("upstreams", arr("vendor", "new_api")), check: upstreams("vendor", "peer_api")},
		{name: "peer only", edit: set("upstreams", arr("peer_api")), check: upstreams("peer_api")},
		{name: "alias duplicates canonical", edit: set("upstreams", arr("peer_api", "new_api")), want: []string{"meta.upstreams[1]|duplicates"}},
		{name: "unknown kind", edit: set("upstreams", arr("proxy")), want: []string{"meta.upstreams[0]|vendor"}},
	})
}

func TestAuth(t *testing.T) {
	auth := func(want string) func(*testing.T, *Manifest) {
		return func(t *testing.T, m *Manifest) {
			if m.Auth.Type != want {
				t.Errorf("auth = %q, want %q", m.Auth.Type, want)
			}
		}
	}
	runCases(t, []ruleCase{
		{name: "string none", edit: set("auth", "none"), check: auth(AuthNone)},
		{name: "string vertex_oauth", edit: set("auth", "vertex_oauth"), check: auth(AuthVertexOAuth)},
		{name: "object oauth2_jwt", edit: set("auth", obj{"type": "oauth2_jwt"}), check: auth(AuthOAuth2JWT)},
		{name: "object api_key", edit: set("auth", obj{"type": "api_key"}), check: auth(AuthAPIKey)},
		{name: "unknown string", edit: set("auth", "basic"), want: []string{"meta.auth|one of"}},
		{name: "unknown object type", edit: set("auth", obj{"type": "hmac"}), want: []string{"meta.auth.type|one of"}},
		{name: "object without type", edit: set("auth", obj{}), want: []string{"meta.auth.type|required"}},
		{name: "object with extra field", edit: set("auth", obj{"type": "api_key", "header": "X-Key"}), want: []string{"meta.auth.header|unknown"}},
		{name: "number", edit: set("auth", float64(1)), want: []string{"meta.auth|string or an object"}},
	})
}

func TestChannelTypes(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "legacy types", edit: set("channelTypes", arr(float64(50), int64(36))), check: func(t *testing.T, m *Manifest) {
			if !slices.Equal(m.ChannelTypes, []int{50, 36}) {
				t.Errorf("channelTypes = %v", m.ChannelTypes)
			}
		}},
		{name: "peer_api type", edit: set("channelTypes", arr(float64(60))), want: []string{"meta.channelTypes[0]|60 and 61"}},
		{name: "task_plugin type", edit: set("channelTypes", arr(float64(61))), want: []string{"meta.channelTypes[0]|60 and 61"}},
		{name: "a repeated type is dropped", edit: set("channelTypes", arr(float64(50), float64(50))),
			check: listIs(func(m *Manifest) []int { return m.ChannelTypes }, 50)},
		{name: "fraction", edit: set("channelTypes", arr(50.5)), want: []string{"meta.channelTypes[0]|integer"}},
		{name: "string", edit: set("channelTypes", arr("50")), want: []string{"meta.channelTypes[0]|integer"}},
		{name: "zero", edit: set("channelTypes", arr(float64(0))), want: []string{"meta.channelTypes[0]|positive"}},
	})
}
