package admin

import (
	"context"
	"testing"
)

// settings.headers values are secrets like the key: write-only, masked,
// kept unless sent again, and needed again when base_url moves.
func TestChannelHeaderValuesAreWriteOnlyLikeTheKey(t *testing.T) {
	const secret = "hdr-secret-value-1234567"
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", `{"name":"h","type":1,"base_url":"https://api.example.com","key":"sk-channel-key-0123456789",
		"settings":{"headers":{"X-Extra-Key":"`+secret+`"}}}`)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	e.ids["ch"] = int64(r.body["id"].(float64))
	masked := maskSecret(secret)
	stored := func() string {
		t.Helper()
		c, err := e.d.Store.Channels().Get(context.Background(), e.ids["ch"])
		if err != nil {
			t.Fatal(err)
		}
		return headerValues(c.Settings)["X-Extra-Key"]
	}
	e.run([]scenario{
		{name: "an answer shows the header masked", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			want: map[string]any{"settings.headers.X-Extra-Key": masked}},
		{name: "settings without headers keep them", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"settings":{"first_byte_timeout_seconds":5}}`, status: 200,
			check: func(t *testing.T, _ *env, _ response) {
				if stored() != secret {
					t.Fatalf("stored header %q", stored())
				}
			}},
		{name: "the masked value sent back keeps the stored one", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"settings":{"headers":{"X-Extra-Key":"` + masked + `"}}}`, status: 200,
			check: func(t *testing.T, _ *env, _ response) {
				if stored() != secret {
					t.Fatalf("stored header %q", stored())
				}
			}},
		{name: "moving base_url with the key but not the headers is refused", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"base_url":"https://evil.example","key":"sk-channel-key-0123456789"}`, status: 400,
			want: map[string]any{"error.message": "settings.headers values are required again when base_url moves the channel to another host " +
				"(send {} to drop them): stored header values are only ever sent to the host they were given for"}},
		{name: "moving with the masked header is refused too", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"base_url":"https://evil.example","key":"sk-channel-key-0123456789","settings":{"headers":{"X-Extra-Key":"` + masked + `"}}}`, status: 400},
		{name: "moving with the header sent again is accepted", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"base_url":"https://other.example","key":"sk-channel-key-0123456789","settings":{"headers":{"X-Extra-Key":"new-header-value-987654"}}}`, status: 200,
			check: func(t *testing.T, _ *env, _ response) {
				if stored() != "new-header-value-987654" {
					t.Fatalf("stored header %q", stored())
				}
			}},
		{name: "root may move it", who: "root", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"base_url":"https://third.example"}`, status: 200},
		{name: "headers sent empty are dropped", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"settings":{"headers":{}}}`, status: 200,
			check: func(t *testing.T, _ *env, _ response) {
				if stored() != "" {
					t.Fatalf("stored header %q", stored())
				}
			}},
	})
	e.assertNeverShown(secret)
	e.assertNeverShown("new-header-value-987654")
}
