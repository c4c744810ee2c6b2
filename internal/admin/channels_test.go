package admin

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
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

const (
	firstKey  = "sk-first-key-aaaa-1111"
	secondKey = "sk-second-key-bbbb-2222"
	thirdKey  = "sk-third-key-cccc-3333"
	fourthKey = "sk-fourth-key-dddd-4444"
)

// refuseKey auto-disables one key of a channel as a 401 from it would.
func (e *env) refuseKey(id int64, key int) {
	e.t.Helper()
	c, err := e.d.Store.Channels().Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	ch := routing.NewTable([]store.Channel{*c}).Channel(id).WithKey(key)
	e.d.Router.Health.Report(ch, key, &ir.Error{UpstreamStatus: 401, Message: "Incorrect API key provided: " + ch.Key})
}

func TestSeveralKeysPerChannel(t *testing.T) {
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", `{"name":"multi","type":"openai","key":"`+firstKey+`\n`+secondKey+`\r\n\n`+thirdKey+`\n",
		"models":["m"],"settings":{"key_selection":"round_robin"}}`)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	id := int64(r.body["id"].(float64))
	e.ids["ch"] = id
	keyStates := func(states ...string) func(t *testing.T, _ *env, r response) {
		return func(t *testing.T, _ *env, r response) {
			keys, _ := r.body["keys"].([]any)
			if len(keys) != len(states) {
				t.Fatalf("keys %v, want %d", r.body["keys"], len(states))
			}
			for i, want := range states {
				k := keys[i].(map[string]any)
				if k["index"] != float64(i) || k["state"] != want {
					t.Fatalf("key %d: %v, want %s", i, k, want)
				}
			}
		}
	}
	e.run([]scenario{
		{name: "each key is listed masked, in order, healthy", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			want: map[string]any{"keys": []map[string]any{
				{"index": 0, "masked": "sk-f...1111", "state": "healthy", "reason": ""},
				{"index": 1, "masked": "sk-s...2222", "state": "healthy", "reason": ""},
				{"index": 2, "masked": "sk-t...3333", "state": "healthy", "reason": ""}},
				"key_masked": "sk-f...1111, sk-s...2222, sk-t...3333", "health.state": "healthy"}},
		{name: "a refused key shows on its own; the channel stays healthy", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			check: func(t *testing.T, e *env, _ response) {
				e.refuseKey(id, 1)
				r := e.do("admin", "GET", "/api/channels/{ch}", "")
				keyStates("healthy", "auto_disabled", "healthy")(t, e, r)
				if reason := lookup(r.body, "keys.1.reason"); !strings.Contains(fmt.Sprint(reason), "401") {
					t.Fatalf("reason %v", reason)
				}
				if lookup(r.body, "health.state") != "healthy" {
					t.Fatalf("health %v", r.body["health"])
				}
			}},
		{name: "the list shows the keys too", who: "admin", method: "GET", path: "/api/channels", status: 200,
			want: map[string]any{"items.0.keys.1.state": "auto_disabled", "items.0.keys.2.masked": "sk-t...3333"}},
		{name: "an unknown key index is 400 naming it", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"key_states":{"3":"enabled"}}`, status: 400, want: map[string]any{"error.message": "key_states.3 is not a key of the channel: its keys are numbered 0 to 2"}},
		{name: "an index that is not a number is 400 naming it", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"key_states":{"one":"enabled"}}`, status: 400, check: errorSays("key_states.one")},
		{name: "an unknown state is 400 naming the key", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"key_states":{"1":"healthy"}}`, status: 400, check: errorSays(`key_states.1 must be "enabled"`)},
		{name: "key_states must be an object", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"key_states":["1"]}`, status: 400, check: errorSays("key_states must be an object")},
		{name: "a refused PATCH changed nothing", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			check: keyStates("healthy", "auto_disabled", "healthy")},
		{name: "key_states re-enables one key", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"key_states":{"1":"enabled"}}`, status: 200, check: keyStates("healthy", "healthy", "healthy")},
		{name: "every key out takes the channel out", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			check: func(t *testing.T, e *env, _ response) {
				for i := range 3 {
					e.refuseKey(id, i)
				}
				r := e.do("admin", "GET", "/api/channels/{ch}", "")
				keyStates("auto_disabled", "auto_disabled", "auto_disabled")(t, e, r)
				if lookup(r.body, "health.state") != "auto_disabled" || !strings.Contains(fmt.Sprint(lookup(r.body, "health.reason")), "every key") {
					t.Fatalf("health %v", r.body["health"])
				}
			}},
		{name: "a new key list keeps the states of keys kept in place and starts the others over", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"key":"` + firstKey + `\n` + secondKey + `\n` + fourthKey + `"}`, status: 200,
			check: keyStates("auto_disabled", "auto_disabled", "healthy")},
		{name: "a key moved to another position starts over", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"key":"` + secondKey + `\n` + secondKey + `"}`, status: 200,
			check: keyStates("healthy", "auto_disabled")},
		{name: "enabling the channel starts every key over", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"status":"enabled"}`, status: 200, check: keyStates("healthy", "healthy")},
		{name: "a disabled channel shows its keys disabled", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"status":"disabled"}`, status: 200, check: keyStates("disabled", "disabled")},
		{name: "a test uses the key asked for, masked in the error", who: "admin", method: "POST", path: "/api/channels/{ch}/test?key_index=1", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if msg := fmt.Sprint(r.body["error"]); !strings.Contains(msg, maskSecret(secondKey)) {
					t.Fatalf("error %q does not name the tested key, masked", msg)
				}
			}},
		{name: "a test of a key the channel lacks is 400", who: "admin", method: "POST", path: "/api/channels/{ch}/test?key_index=2", status: 400},
	})
	for _, k := range []string{firstKey, secondKey, thirdKey, fourthKey} {
		e.assertNeverShown(k)
	}
}

func TestMalformedKeyListsAreRefusedSayingWhatToFix(t *testing.T) {
	const secret = "sk-never-echoed-secret"
	cases := []struct {
		name, body, want string
	}{
		{"two keys on one line", `{"name":"x","type":"openai","key":"sk-a ` + secret + `"}`, "key line 1 has a space inside it: put one key per line"},
		{"a key after a label", `{"name":"x","type":"anthropic","key":"sk-a\nkey:\t` + secret + `"}`, "key line 2 has a space inside it"},
		{"blank lines only", `{"name":"x","type":"openai","key":" \n \n"}`, "key holds only blank lines"},
		{"an unknown key selection", `{"name":"x","type":"openai","key":"sk-a","settings":{"key_selection":"weighted"}}`,
			`settings.key_selection must be "random" or "round_robin"`},
	}
	e := newEnv(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("admin", "POST", "/api/channels", tc.body)
			if r.status != 400 || !strings.Contains(fmt.Sprint(lookup(r.body, "error.message")), tc.want) {
				t.Fatalf("status %d %s, want 400 saying %q", r.status, r.raw, tc.want)
			}
		})
	}
	r := e.do("admin", "POST", "/api/channels", `{"name":"ok","type":"openai","key":"sk-a"}`)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	e.ids["ok"] = int64(r.body["id"].(float64))
	if r := e.do("admin", "PATCH", "/api/channels/{ok}", `{"key":"sk-b `+secret+`"}`); r.status != 400 {
		t.Fatalf("patch with a malformed list: %d %s", r.status, r.raw)
	}
	// A task channel's key is one credential its plugin reads as it is.
	if r := e.do("admin", "POST", "/api/channels", `{"name":"video","type":"kling","key":"access `+secret+`"}`); r.status != 200 {
		t.Fatalf("a task channel's key with a space: %d %s", r.status, r.raw)
	}
	e.assertNeverShown(secret)
}

func errorSays(part string) func(t *testing.T, _ *env, r response) {
	return func(t *testing.T, _ *env, r response) {
		if msg := fmt.Sprint(lookup(r.body, "error.message")); !strings.Contains(msg, part) {
			t.Fatalf("error %q, want one saying %q", msg, part)
		}
	}
}

// A channel left without a key (an import without secrets) is never
// reported as working, even by an upstream that answers without one.
func TestChannelTestOfAKeylessChannelIsNotASuccess(t *testing.T) {
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", `{"name":"good-keyless","type":1,"base_url":"http://127.0.0.1:9101"}`)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	id := int64(r.body["id"].(float64))
	r = e.do("admin", "POST", fmt.Sprintf("/api/channels/%d/test", id), "")
	if r.status != 200 || r.body["success"] != false || !strings.Contains(string(r.raw), "no key") {
		t.Fatalf("test of a keyless channel: %d %s", r.status, r.raw)
	}
}

// One secret shows one way in every field: an API key's listing, a
// channel's key_masked and keys[].masked, header values.
func TestEverySecretIsMaskedAlike(t *testing.T) {
	for _, k := range []string{"sk-upstream-key", "sk-abcdefghijklmnopqrstuvwxyz0123", "short"} {
		want := store.MaskSecret(k)
		for name, got := range map[string]string{"API key": auth.MaskKey(k), "channel key": maskKeys([]string{k}),
			"keys[].masked": routing.MaskKey(k), "header value": maskSecret(k)} {
			if got != want {
				t.Errorf("%s %q shows as %q, want %q as everywhere", name, k, got, want)
			}
		}
	}
}
