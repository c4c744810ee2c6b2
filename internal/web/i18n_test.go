package web

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// catalogueKeys returns the keys of one language table in i18n.js.
func catalogueKeys(t *testing.T, src, name string) []string {
	t.Helper()
	start := strings.Index(src, "const "+name+" = {")
	if start < 0 {
		t.Fatalf("no table %s in i18n.js", name)
	}
	end := strings.Index(src[start:], "\n};")
	body := src[start : start+end]
	var keys []string
	for _, m := range regexp.MustCompile(`"([a-zA-Z0-9_.]+)":`).FindAllStringSubmatch(body, -1) {
		keys = append(keys, m[1])
	}
	slices.Sort(keys)
	return keys
}

func TestEnglishAndChineseCataloguesHaveTheSameMessages(t *testing.T) {
	raw, err := os.ReadFile("static/js/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	en, zh := catalogueKeys(t, string(raw), "en"), catalogueKeys(t, string(raw), "zh")
	if len(en) < 50 || !slices.Equal(en, zh) {
		t.Fatalf("catalogues differ:\nen only: %v\nzh only: %v", diff(en, zh), diff(zh, en))
	}
}

func TestEveryMessageKeyUsedInTheConsoleExists(t *testing.T) {
	raw, _ := os.ReadFile("static/js/i18n.js")
	known := map[string]bool{}
	for _, k := range catalogueKeys(t, string(raw), "en") {
		known[k] = true
	}
	files, _ := os.ReadDir("static/js/pages")
	paths := []string{"static/js/main.js", "static/js/login.js", "static/js/ui.js", "static/js/chart.js", "static/js/money.js",
		"static/js/dom.js", "static/js/limits.js"}
	for _, f := range files {
		paths = append(paths, "static/js/pages/"+f.Name())
	}
	plugins, _ := os.ReadDir("static/js/plugins")
	for _, f := range plugins {
		paths = append(paths, "static/js/plugins/"+f.Name())
	}
	use := regexp.MustCompile(`\b(?:t|tr)\("([a-zA-Z0-9_.]+)"`)
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range use.FindAllStringSubmatch(string(src), -1) {
			if !known[m[1]] {
				t.Errorf("%s uses the unknown message %q", p, m[1])
			}
		}
	}
}

func diff(a, b []string) []string {
	var out []string
	for _, k := range a {
		if !slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}
