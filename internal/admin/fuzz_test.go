package admin

import (
	"encoding/json"
	"testing"
)

func FuzzParseFields(f *testing.F) {
	for _, s := range []string{`{"name":"a","type":1}`, `{}`, `[]`, `null`, `{"name":1}{}`, `{"a":`, `  {"models":["x"]}  `, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fl, err := parseFields(data, channelFields)
		if err != nil {
			if _, ok := err.(*apiError); !ok {
				t.Fatalf("non-API error %T for %q", err, data)
			}
			return
		}
		for name := range fl {
			if !fieldAllowed(name) {
				t.Fatalf("unknown member %q passed", name)
			}
		}
		// Decoding members must never panic, only answer 400s.
		var c struct{ name, base string }
		_, _ = get(fl, "name", &c.name)
		var models []string
		_, _ = getList(fl, "models", &models)
		if fl.has("type") {
			_, _ = parseChannelType(fl["type"])
		}
		if fl.has("settings") {
			var m map[string]any
			_ = getMap(fl, "settings", &m)
		}
	})
}

func fieldAllowed(name string) bool {
	for _, f := range channelFields {
		if f == name {
			return true
		}
	}
	return false
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "abc", "9223372036854775807", "9223372036854775808", "1e3", " 1", "+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseID(s)
		if err == nil && id <= 0 {
			t.Fatalf("parseID(%q) accepted %d", s, id)
		}
	})
}

func FuzzParseExpiry(f *testing.F) {
	for _, s := range []string{`null`, `""`, `"2030-01-02T15:04:05Z"`, `"2030-01-02T15:04:05+02:00"`, `1893456000`, `-1`, `0`, `"tomorrow"`, `1.5`, `{}`, `99999999999999999999`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		exp, err := parseExpiry(json.RawMessage(s))
		if err != nil {
			if _, ok := err.(*apiError); !ok {
				t.Fatalf("non-API error %T for %q", err, s)
			}
			return
		}
		if exp != nil {
			if _, err := json.Marshal(exp); err != nil {
				t.Fatalf("accepted expiry %q cannot be shown: %v", s, err)
			}
		}
	})
}
