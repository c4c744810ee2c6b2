package admin

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.golden.json from the served document")

// The document is built on demand from functions rather than package
// variables; the golden file, written from the package-variable version,
// proves the served bytes did not change. It is kept indented so a change
// reads as a diff; indenting is lossless, so equal indented text means
// equal served bytes.
func TestTheServedOpenAPIDocumentMatchesTheGoldenFile(t *testing.T) {
	e := newEnv(t)
	r := e.do("", "GET", "/api/openapi.json", "")
	if r.status != 200 {
		t.Fatalf("GET /api/openapi.json: %d %.200s", r.status, r.raw)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, []byte(r.raw), "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", "openapi.golden.json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden %s (run with -update): %v", path, err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the served document differs from %s (run with -update only for an intended change)", path)
	}
}
