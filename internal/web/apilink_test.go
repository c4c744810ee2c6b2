package web

import (
	"os"
	"strings"
	"testing"
)

// The console links the API reference (CONTRACT §16) from every page's
// sidebar, in every language.
func TestTheConsoleLinksTheOpenAPIDocument(t *testing.T) {
	js, err := os.ReadFile("static/js/main.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `href: "/api/openapi.json"`) {
		t.Fatal("main.js does not link /api/openapi.json")
	}
	cat, err := os.ReadFile("static/js/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(cat), `"shell.apiReference":`); n < 2 {
		t.Fatalf("the link's label is in %d language tables, want every one", n)
	}
}
