package openai

import (
	"encoding/json"
	"testing"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	tests := []struct{ name, in string }{
		{"plain", "hello"},
		{"quotes and backslashes", `say "hi" \ bye`},
		{"control characters", "a\nb\rc\td\x00e\x1f"},
		{"non-ASCII", "héllo 世界 🎉"},
		{"line separators", "a\u2028b\u2029c"},
		{"HTML stays readable", "<b>&</b>"},
		{"invalid UTF-8", "bad\xffbyte\xc3"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkAppendString(t, tt.in)
		})
	}
}

// checkAppendString asserts our output is valid JSON that decodes to what
// encoding/json's encoding of the same string decodes to.
func checkAppendString(t *testing.T, in string) {
	t.Helper()
	ours := appendString(nil, in)
	var gotOurs string
	if err := json.Unmarshal(ours, &gotOurs); err != nil {
		t.Fatalf("appendString(%q) = %s, not JSON: %v", in, ours, err)
	}
	theirs, _ := json.Marshal(in)
	var gotTheirs string
	if err := json.Unmarshal(theirs, &gotTheirs); err != nil {
		t.Fatal(err)
	}
	if gotOurs != gotTheirs {
		t.Errorf("appendString(%q) decodes to %q, encoding/json to %q", in, gotOurs, gotTheirs)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkAppendString(t, in) })
}
