package app

import (
	"net/http/httptest"
	"testing"
)

func TestOnlyChangesAreAnnouncedToOtherNodes(t *testing.T) {
	cases := []struct {
		method, path string
		kind         string // "" when not announced
	}{
		{"PUT", "/api/models/gpt-4o", "models"},
		{"POST", "/api/models/catalogue/apply", "models"},
		{"POST", "/api/models/catalogue/preview", ""},
		{"POST", "/api/pricing/estimate", ""},
		{"GET", "/api/models/gpt-4o/history", ""},
		{"POST", "/api/auth/login", ""},
		{"DELETE", "/api/tokens/3", "tokens"},
	}
	for _, tc := range cases {
		kind, ok := changeKind(httptest.NewRequest(tc.method, tc.path, nil))
		if kind != tc.kind || ok != (tc.kind != "") {
			t.Errorf("%s %s: announced %q (%v), want %q", tc.method, tc.path, kind, ok, tc.kind)
		}
	}
}
