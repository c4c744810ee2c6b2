package store

import "testing"

func TestMaskSecretShowsNoMoreThanItsEnds(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"short", "****"},
		{"elevenchars", "****"},
		{"sk-upstream-key", "sk-u...-key"},
		{"sk-abcdefghijklmxyz", "sk-a...mxyz"},
	}
	for _, tc := range cases {
		if got := MaskSecret(tc.in); got != tc.want {
			t.Errorf("MaskSecret(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
