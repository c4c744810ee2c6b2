package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func testSite() *site {
	return newSite(fstest.MapFS{
		"index.html":  {Data: []byte(`<script type="module" src="{{ASSET_BASE}}js/main.js"></script>`)},
		"js/main.js":  {Data: []byte(`import "./dom.js";`)},
		"js/dom.js":   {Data: []byte(`export const x = 1;`)},
		"app.css":     {Data: []byte(`body{}`)},
		"favicon.svg": {Data: []byte(`<svg/>`)},
	})
}

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

func TestRoutingSeparatesIndexAssetsAndAPIPaths(t *testing.T) {
	s := testSite()
	base := "/assets/" + s.version + "/"
	tests := []struct {
		name, method, path string
		status             int
		ctype              string
		cache              string
		bodyHas            string
	}{
		{"root serves the index", "GET", "/", 200, "text/html", "no-cache", base + "js/main.js"},
		{"a console route serves the index", "GET", "/playground", 200, "text/html", "no-cache", "module"},
		{"a nested console route serves the index", "GET", "/keys/12", 200, "text/html", "no-cache", "module"},
		{"HEAD of a route serves the index headers", "HEAD", "/channels", 200, "text/html", "no-cache", ""},
		{"a hashed script is immutable", "GET", base + "js/main.js", 200, "text/javascript", "immutable", "dom.js"},
		{"a hashed stylesheet is immutable", "GET", base + "app.css", 200, "text/css", "immutable", "body"},
		{"an svg has its type", "GET", base + "favicon.svg", 200, "image/svg+xml", "immutable", "<svg"},
		{"an old hash still loads but is not cached", "GET", "/assets/000000000000/js/dom.js", 200, "text/javascript", "no-cache", "export"},
		{"a missing asset is 404", "GET", base + "js/nope.js", 404, "text/plain", "", ""},
		{"an asset path without a hash is 404", "GET", "/assets/app.css", 404, "text/plain", "", ""},
		{"the raw index is not an asset", "GET", base + "index.html", 404, "text/plain", "", ""},
		{"an escaping path is 404", "GET", base + "../web.go", 404, "text/plain", "", ""},
		{"a stray file name is 404, not HTML", "GET", "/robots.txt", 404, "text/plain", "", ""},
		{"an unknown /api path is JSON 404", "GET", "/api/nothing", 404, "application/json", "no-store", "not_found"},
		{"the bare /api prefix is JSON 404", "GET", "/api", 404, "application/json", "no-store", "not_found"},
		{"an unknown /v1 path is JSON 404", "GET", "/v1/unknown", 404, "application/json", "no-store", "not_found"},
		{"an unknown /v1beta path is JSON 404", "GET", "/v1beta/models/x", 404, "application/json", "no-store", "not_found"},
		{"an unknown /pg path is JSON 404", "GET", "/pg/models", 404, "application/json", "no-store", "not_found"},
		{"a prefix lookalike is a console route", "GET", "/apiary", 200, "text/html", "no-cache", "module"},
		{"POST is refused", "POST", "/", 405, "text/plain", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, s, tt.method, tt.path)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d (body %q)", rec.Code, tt.status, rec.Body.String())
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
				t.Errorf("Content-Type = %q, want prefix %q", ct, tt.ctype)
			}
			if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, tt.cache) {
				t.Errorf("Cache-Control = %q, want it to contain %q", cc, tt.cache)
			}
			if !strings.Contains(rec.Body.String(), tt.bodyHas) {
				t.Errorf("body %q does not contain %q", rec.Body.String(), tt.bodyHas)
			}
		})
	}
}

func TestIndexCarriesSecurityHeaders(t *testing.T) {
	rec := get(t, testSite(), "GET", "/")
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy = %q, want script-src 'self'", csp)
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Error("X-Content-Type-Options: nosniff is missing")
	}
	if strings.Contains(rec.Body.String(), "{{ASSET_BASE}}") {
		t.Error("the asset placeholder was not replaced")
	}
}

func TestVersionChangesWithContent(t *testing.T) {
	a := newSite(fstest.MapFS{"index.html": {Data: []byte("x")}, "a.js": {Data: []byte("1")}})
	b := newSite(fstest.MapFS{"index.html": {Data: []byte("x")}, "a.js": {Data: []byte("2")}})
	c := newSite(fstest.MapFS{"index.html": {Data: []byte("x")}, "a.js": {Data: []byte("1")}})
	if a.version == b.version {
		t.Error("different asset content gave the same version")
	}
	if a.version != c.version {
		t.Error("the same content gave different versions")
	}
}

// TestEmbeddedConsoleIsComplete checks the real embedded files: every page
// module the router names exists and every module is served as JavaScript.
func TestEmbeddedConsoleIsComplete(t *testing.T) {
	h := Handler().(*site)
	index := get(t, h, "GET", "/")
	if !strings.Contains(index.Body.String(), "/assets/"+h.version+"/js/main.js") {
		t.Fatalf("index does not load the hashed main module: %s", index.Body.String())
	}
	pages := []string{"dashboard", "playground", "keys", "logs", "tasks", "users", "channels", "models", "groups", "plugins", "guardrails", "orgs", "myteam"}
	files := []string{"app.css", "theme.js", "favicon.svg", "js/main.js", "js/api.js", "js/dom.js", "js/ui.js", "js/sse.js", "js/chart.js", "js/pages/teammembers.js"}
	for _, p := range pages {
		files = append(files, "js/pages/"+p+".js")
	}
	main := get(t, h, "GET", "/assets/"+h.version+"/js/main.js").Body.String()
	for _, p := range pages {
		if !strings.Contains(main, `module: "`+p+`"`) {
			t.Errorf("the router does not name page %s", p)
		}
	}
	for _, f := range files {
		rec := get(t, h, "GET", "/assets/"+h.version+"/"+f)
		if rec.Code != 200 {
			t.Errorf("%s: status %d", f, rec.Code)
		}
	}
}
