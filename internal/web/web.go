// Package web serves the embedded console and playground: a single-page
// application written as plain ES modules, so building the binary needs no
// front-end tool chain.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
)

//go:embed static
var embedded embed.FS

// assetPrefix is where static files live. The path segment after it is a
// content hash of every asset, so a new binary changes every asset URL and
// browsers may cache each one forever.
const assetPrefix = "/assets/"

// basePlaceholder in index.html is replaced by the hashed asset base.
const basePlaceholder = "{{ASSET_BASE}}"

// apiPrefixes are owned by JSON handlers. A GET that reaches the console
// under one of them is a typo or a missing route, and answering it with HTML
// would confuse API clients that expect JSON.
var apiPrefixes = []string{"/api", "/v1", "/v1beta", "/pg", "/healthz", "/metrics", "/mj", "/suno", "/kling", "/jimeng"}

// contentSecurityPolicy keeps the console to its own scripts: everything is
// same-origin, so nothing else is needed and injected markup cannot run code.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// contentTypes is fixed rather than read from the system's MIME table, which
// differs between machines; a module script served with a wrong type is
// refused by the browser.
var contentTypes = map[string]string{
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".json": "application/json",
}

type site struct {
	files   fs.FS
	version string
	index   []byte
}

// Handler returns the console: the index page for application routes,
// immutable hashed assets under /assets/{hash}/, and a JSON 404 for API
// paths so the console never masks a missing API route.
func Handler() http.Handler {
	files, err := fs.Sub(embedded, "static")
	if err != nil {
		panic("web: embedded assets missing: " + err.Error())
	}
	return newSite(files)
}

func newSite(files fs.FS) *site {
	s := &site{files: files, version: hashFiles(files)}
	raw, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic("web: index.html missing: " + err.Error())
	}
	s.index = bytes.ReplaceAll(raw, []byte(basePlaceholder), []byte(assetPrefix+s.version+"/"))
	return s
}

// hashFiles digests every file name and content in a stable order.
func hashFiles(files fs.FS) string {
	var names []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		data, _ := fs.ReadFile(files, n)
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case isAPIPath(p):
		notFoundJSON(w)
	case strings.HasPrefix(p, assetPrefix):
		s.serveAsset(w, r, strings.TrimPrefix(p, assetPrefix))
	case looksLikeFile(p):
		http.NotFound(w, r)
	default:
		s.serveIndex(w)
	}
}

func isAPIPath(p string) bool {
	for _, pre := range apiPrefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// looksLikeFile is true for a last segment with an extension (robots.txt,
// a stale script): those are missing files, not console routes, and an HTML
// answer would be parsed as the wrong type.
func looksLikeFile(p string) bool {
	return strings.Contains(path.Base(p), ".")
}

func notFoundJSON(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such API route"}}` + "\n"))
}

func (s *site) serveIndex(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The page names the current asset hash, so it must be revalidated to
	// pick up a new release.
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	_, _ = w.Write(s.index)
}

// serveAsset answers /assets/{hash}/{name}. A hash from an older release
// still gets the current file, uncached, so a tab left open across an
// upgrade keeps working instead of failing on every import.
func (s *site) serveAsset(w http.ResponseWriter, r *http.Request, rest string) {
	version, name, ok := strings.Cut(rest, "/")
	if !ok || name == "" || name == "index.html" || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	data, err := fs.ReadFile(s.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	ctype, ok := contentTypes[path.Ext(name)]
	if !ok {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	if version == s.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	_, _ = w.Write(data)
}
