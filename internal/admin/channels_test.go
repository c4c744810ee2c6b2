package admin

import (
	"testing"
)

const channelBody = `{"name":"openai-main","type":"openai","base_url":"http://127.0.0.1:9101/v1/","key":"` + testChannelKey + `",
	"models":["gpt-4o-mini"],"groups":["default","vip"],"priority":10,"weight":3,"model_mapping":{"gpt-4o-mini":"gpt-4o-mini-2024-07-18"},
	"settings":{"first_byte_timeout_seconds":5}}`

func TestChannelScenarios(t *testing.T) {
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", channelBody)
	if r.status != 200 {
		t.Fatalf("create channel: %d %s", r.status, r.raw)
	}
	e.ids["ch"] = int64(r.body["id"].(float64))
	e.run([]scenario{
		{name: "the created channel has every seed field", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			want: map[string]any{"name": "openai-main", "type": 1, "type_name": "openai", "base_url": "http://127.0.0.1:9101",
				"key_masked": "sk-u...-key", "models": []string{"gpt-4o-mini"}, "groups": []string{"default", "vip"}, "priority": 10,
				"weight": 3, "model_mapping": map[string]string{"gpt-4o-mini": "gpt-4o-mini-2024-07-18"},
				"settings": map[string]any{"first_byte_timeout_seconds": 5}, "status": "enabled", "health.state": "healthy"}},
		{name: "the key is write-only", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if _, ok := r.body["key"]; ok {
					t.Fatalf("key member present: %s", r.raw)
				}
			}},
		{name: "a user cannot see channels", who: "alice", method: "GET", path: "/api/channels", status: 403},
		{name: "anonymous cannot see channels", method: "GET", path: "/api/channels", status: 401},
		{name: "root lists channels", who: "root", method: "GET", path: "/api/channels", status: 200, check: wantTotal(1)},
		{name: "a type number is accepted", who: "admin", method: "POST", path: "/api/channels",
			body: `{"name":"claude","type":14,"base_url":"https://api.anthropic.com","key":"k"}`, status: 200,
			want: map[string]any{"type": 14, "type_name": "anthropic", "weight": 1, "groups": []string{"default"}, "key_masked": "****"}},
		{name: "a peer gateway by its ecosystem name", who: "admin", method: "POST", path: "/api/channels",
			body: `{"name":"peer","type":"new_api","base_url":"https://peer.example"}`, status: 200,
			want: map[string]any{"type": 60, "type_name": "peer_api", "key_masked": ""}},
		{name: "an unknown type name is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":"openia"}`, status: 400},
		{name: "a type of 0 is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":0}`, status: 400},
		{name: "a type of the wrong kind is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":[1]}`, status: 400},
		{name: "a negative weight is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":1,"weight":-1}`, status: 400},
		{name: "a base_url that is not http is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":1,"base_url":"ftp://h"}`, status: 400},
		{name: "a string priority is 400 naming the field", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":1,"priority":"high"}`, status: 400,
			want: map[string]any{"error.message": "priority must be an integer"}},
		{name: "a mapping to numbers is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":1,"model_mapping":{"a":1}}`, status: 400},
		{name: "a missing type is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x"}`, status: 400},
		{name: "an unknown member is 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"x","type":1,"tag":"a"}`, status: 400},
		{name: "a duplicate name is 409", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"openai-main","type":1}`, status: 409},
		{name: "two objects in one body are 400", who: "admin", method: "POST", path: "/api/channels", body: `{"name":"y","type":1}{}`, status: 400},
		{name: "patch changes only what is sent", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"priority":3,"status":"disabled"}`, status: 200,
			want: map[string]any{"priority": 3, "status": "disabled", "weight": 3, "key_masked": "sk-u...-key"}},
		{name: "patch with a bad weight is 400", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"weight":-3}`, status: 400},
		{name: "patch of a missing channel is 404", who: "admin", method: "PATCH", path: "/api/channels/9999", body: `{"weight":1}`, status: 404},
		{name: "a failing test reports the error without the key", who: "admin", method: "POST", path: "/api/channels/{ch}/test", status: 200,
			want: map[string]any{"success": false}},
		{name: "a user cannot test channels", who: "alice", method: "POST", path: "/api/channels/{ch}/test", status: 403},
		{name: "testing a missing channel is 404", who: "admin", method: "POST", path: "/api/channels/9999/test", status: 404},
		{name: "renamed to good, the test passes with a latency", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"name":"good-one"}`, status: 200},
		{name: "a passing test reports latency", who: "admin", method: "POST", path: "/api/channels/{ch}/test", status: 200,
			want: map[string]any{"success": true, "latency_ms": 42}},
		{name: "a user cannot delete channels", who: "alice", method: "DELETE", path: "/api/channels/{ch}", status: 403},
		{name: "an admin deletes the channel", who: "admin", method: "DELETE", path: "/api/channels/{ch}", status: 200},
		{name: "deleting again is 404", who: "admin", method: "DELETE", path: "/api/channels/{ch}", status: 404},
	})
	e.assertNeverShown(testChannelKey)
	if e.reloads.Load() < 5 {
		t.Fatalf("routing reloaded %d times, want one per change", e.reloads.Load())
	}
}

func TestEnablingAChannelResetsItsHealth(t *testing.T) {
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", channelBody)
	id := int64(r.body["id"].(float64))
	e.ids["ch"] = id
	e.d.Router.Health.CoolDown(id, "401 from upstream")
	e.run([]scenario{
		{name: "the cool-down shows", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			want: map[string]any{"health.state": "cooling", "health.reason": "401 from upstream"}},
		{name: "enabling puts it back into routing", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"status":"enabled"}`, status: 200,
			want: map[string]any{"health.state": "healthy", "health.until": nil}},
	})
}

func TestMaskSecretNeverRevealsShortKeys(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"short", "****"},
		{"elevenchars", "****"},
		{"sk-upstream-key", "sk-u...-key"},
	}
	for _, c := range cases {
		if got := maskSecret(c.in); got != c.want {
			t.Errorf("maskSecret(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
