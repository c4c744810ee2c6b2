package plugin

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// marketServer serves an index.json and plugin files; the index is built by
// the test from the server's own files so sha256 values are real.
type marketServer struct {
	files map[string]string
	srv   *httptest.Server
}

func newMarketServer(t *testing.T, files map[string]string) *marketServer {
	m := &marketServer{files: files}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := m.files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *marketServer) indexURL() string { return m.srv.URL + "/market/index.json" }

func TestMarketplaceInstall(t *testing.T) {
	perTask := withVersion(source(t, "per_task.js"), "1.0.0")
	batch := source(t, "batch.js")
	files := map[string]string{
		"market/acme-video/1.0.0/plugin.js": perTask,
		"market/acme-video/1.1.0/plugin.js": withVersion(perTask, "1.1.0"),
		"market/renamed/2.1.0/plugin.js":    batch,
	}
	files["market/index.json"] = `{"indexVersion": 1, "plugins": [
	  {"key": "acme-video", "name": "Acme Video", "versions": [
	    {"version": "1.0.0", "path": "acme-video/1.0.0/plugin.js", "sha256": "` + SourceSHA256(perTask) + `"},
	    {"version": "1.1.0", "path": "acme-video/1.1.0/plugin.js", "sha256": "` + strings.Repeat("0", 64) + `"}]},
	  {"key": "tunebox", "versions": [{"version": "2.1.0", "path": "renamed/2.1.0/plugin.js", "sha256": "` + SourceSHA256(batch) + `"}]}
	]}`
	m := newMarketServer(t, files)
	e := newAdminEnv(t)
	e.want(e.do(asRoot, "POST", "/api/plugin/task/marketplace/sources", map[string]any{"url": m.indexURL()}), 200)
	e.want(e.do(asRoot, "POST", "/api/plugin/task/marketplace/sources", map[string]any{"url": m.indexURL()}), 200)
	e.want(e.do(asRoot, "POST", "/api/plugin/task/marketplace/sources", map[string]any{"url": "ftp://x.example/index.json"}), 400)
	src := e.want(e.do(asRoot, "GET", "/api/plugin/task/marketplace/sources", nil), 200)
	if src.body["total"] != 1.0 {
		t.Fatalf("sources %s", src.raw)
	}

	cat := e.want(e.do(asRoot, "GET", "/api/plugin/task/marketplace", nil), 200)
	items := cat.body["items"].([]any)
	first := items[0].(map[string]any)
	v0 := first["versions"].([]any)[0].(map[string]any)
	if len(items) != 2 || first["key"] != "acme-video" || v0["url"] != m.srv.URL+"/market/acme-video/1.0.0/plugin.js" {
		t.Fatalf("catalogue %s", cat.raw)
	}

	install := func(key, version string) resp {
		return e.do(asRoot, "POST", "/api/plugin/task/marketplace/install", map[string]any{"source": m.indexURL(), "key": key, "version": version})
	}
	tests := []struct {
		name, key, version string
		status             int
		code               string
	}{
		{"a matching sha256 installs", "acme-video", "1.0.0", 200, ""},
		{"installing it again is a no-op", "acme-video", "1.0.0", 200, ""},
		{"a wrong sha256 is rejected", "acme-video", "1.1.0", 400, "marketplace_checksum_mismatch"},
		{"a key that is not its directory name is rejected", "tunebox", "2.1.0", 400, "marketplace_key_mismatch"},
		{"an unknown version is 404", "acme-video", "9.0.0", 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := install(tt.key, tt.version)
			if r.status != tt.status || (tt.code != "" && errCode(r) != tt.code) {
				t.Fatalf("install %s@%s = %d %s, want %d %s", tt.key, tt.version, r.status, r.raw, tt.status, tt.code)
			}
		})
	}
	if _, ok := e.reg.Current().Plugin("acme-video"); !ok {
		t.Fatal("the installed plugin must be live")
	}
	if v, _ := e.reg.db.version(t.Context(), "acme-video", "1.0.0"); v.Origin != OriginMarketplace || !strings.HasSuffix(v.OriginURL, "/plugin.js") {
		t.Fatalf("stored origin %+v", v)
	}
	other := e.do(asRoot, "POST", "/api/plugin/task/marketplace/install", map[string]any{"source": "https://unknown.example/index.json", "key": "a", "version": "1.0.0"})
	if other.status != 404 {
		t.Fatalf("an unregistered source must be 404: %s", other.raw)
	}
	e.want(e.do(asRoot, "DELETE", "/api/plugin/task/marketplace/sources?url="+url.QueryEscape(m.indexURL()), nil), 200)
	e.want(e.do(asRoot, "DELETE", "/api/plugin/task/marketplace/sources?url="+url.QueryEscape(m.indexURL()), nil), 404)
}

func TestMarketplaceCatalogueReportsBrokenSources(t *testing.T) {
	m := newMarketServer(t, map[string]string{"market/index.json": `{"indexVersion": 2, "plugins": []}`})
	e := newAdminEnv(t)
	e.want(e.do(asRoot, "POST", "/api/plugin/task/marketplace/sources", map[string]any{"url": m.indexURL()}), 200)
	e.want(e.do(asRoot, "POST", "/api/plugin/task/marketplace/sources", map[string]any{"url": m.srv.URL + "/missing.json"}), 200)
	cat := e.want(e.do(asRoot, "GET", "/api/plugin/task/marketplace", nil), 200)
	if errs := cat.body["errors"].([]any); len(errs) != 2 || cat.body["total"] != 0.0 {
		t.Fatalf("catalogue %s", cat.raw)
	}
}

func TestParseIndexShapes(t *testing.T) {
	base, _ := url.Parse("https://market.example/plugins/index.json")
	sha := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		doc     string
		wantKey string
		wantDir string
		wantURL string
		wantErr string
	}{
		{"list of plugins with relative paths", `{"indexVersion":1,"plugins":[{"key":"acme","versions":[{"version":"1.0.0","path":"acme/1.0.0/plugin.js","sha256":"` + sha + `"}]}]}`,
			"acme", "acme", "https://market.example/plugins/acme/1.0.0/plugin.js", ""},
		{"plugins keyed by key, versions keyed by version", `{"plugins":{"acme":{"versions":{"1.0.0":{"url":"https://cdn.example/x/acme/1.0.0/plugin.js","sha256":"sha256:` + strings.ToUpper(sha) + `"}}}}}`,
			"acme", "acme", "https://cdn.example/x/acme/1.0.0/plugin.js", ""},
		{"a single inline version and an explicit directory", `{"plugins":[{"key":"acme","directory":"vendors/acme/","version":"1.0.0","file":"../files/a.js","sha256":"` + sha + `"}]}`,
			"acme", "acme", "https://market.example/files/a.js", ""},
		{"another index version is refused", `{"indexVersion":3,"plugins":[]}`, "", "", "", "indexVersion"},
		{"a version without sha256 is refused", `{"plugins":[{"key":"a","versions":[{"version":"1.0.0","path":"a/1.0.0/p.js"}]}]}`, "", "", "", "sha256"},
		{"a non-http file address is refused", `{"plugins":[{"key":"a","versions":[{"version":"1.0.0","url":"file:///etc/passwd","sha256":"` + sha + `"}]}]}`, "", "", "", "not http"},
		{"not an object", `[1,2]`, "", "", "", "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx, err := ParseIndex([]byte(tt.doc), base)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e := idx.Entries[0]
			if e.Key != tt.wantKey || e.Directory != tt.wantDir || e.Versions[0].URL != tt.wantURL || e.Versions[0].SHA256 != sha {
				t.Fatalf("entry %+v", e)
			}
		})
	}
}

func FuzzParseIndex(f *testing.F) {
	sha := strings.Repeat("ab", 32)
	f.Add(`{"indexVersion":1,"plugins":[{"key":"acme","versions":[{"version":"1.0.0","path":"acme/1.0.0/plugin.js","sha256":"` + sha + `"}]}]}`)
	f.Add(`{"plugins":{"a":{"version":"1","url":"//x/a/1/p.js","sha256":"` + sha + `"}}}`)
	f.Add(`{"plugins":[{"key":"a","versions":{"1.0.0":{"path":"%zz","sha256":"x"}}}]}`)
	f.Add(`null`)
	base, _ := url.Parse("https://market.example/index.json")
	f.Fuzz(func(t *testing.T, doc string) {
		idx, err := ParseIndex([]byte(doc), base)
		if err != nil {
			return
		}
		for _, e := range idx.Entries {
			if e.Key == "" {
				t.Fatalf("an entry without key was accepted: %+v", e)
			}
			for _, v := range e.Versions {
				if len(v.SHA256) != 64 || !(strings.HasPrefix(v.URL, "http://") || strings.HasPrefix(v.URL, "https://")) {
					t.Fatalf("an unusable version was accepted: %+v", v)
				}
			}
		}
	})
}

func TestRedactURLDropsQueryAndCredentials(t *testing.T) {
	got := redactURL("https://user:pw@market.example/index.json?token=s3cret#frag")
	if strings.Contains(got, "s3cret") || strings.Contains(got, "pw") || got != "https://market.example/index.json?redacted" {
		t.Fatalf("redactURL = %q", got)
	}
}
