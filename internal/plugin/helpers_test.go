package plugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// openStore opens (or reopens) a SQLite database file for a test.
func openStore(t *testing.T, path string) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.OpenStore(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newTestRegistry returns a loaded registry over a fresh database.
func newTestRegistry(t *testing.T) (*Registry, *sqlstore.Store) {
	t.Helper()
	st := openStore(t, sqlitetest.Path(t))
	r := NewRegistry(Options{Store: st, Node: "node-a", PoolSize: 2, HookTimeout: time.Second})
	t.Cleanup(r.Close)
	if err := r.Load(context.Background()); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return r, st
}

// source reads a testdata plugin, optionally renaming its version.
func source(t *testing.T, name string, version ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if len(version) > 0 {
		s = withVersion(s, version[0])
	}
	return s
}

// withVersion rewrites the first `version: "..."` of a plugin source.
func withVersion(src, version string) string {
	i := strings.Index(src, `version: "`)
	if i < 0 {
		return src
	}
	j := strings.Index(src[i+10:], `"`)
	return src[:i] + `version: "` + version + `"` + src[i+10+j+1:]
}

func mustUpload(t *testing.T, r *Registry, req UploadRequest) *UploadResult {
	t.Helper()
	res, err := r.Upload(context.Background(), req)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	return res
}

func boolPtr(b bool) *bool { return &b }
