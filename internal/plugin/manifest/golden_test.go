package manifest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture is a synthetic plugin as the JS runtime would report it.
type fixture struct {
	Meta      any      `json:"meta"`
	Functions []string `json:"functions"`
	Names     []string `json:"names"`
}

func (f fixture) exports() Exports {
	return Exports{Meta: f.Meta, Functions: f.Functions, Names: topNames(f.Functions, append([]string{"meta"}, f.Names...)...)}
}

func loadFixture(t *testing.T, path string) fixture {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// TestGoldenPlugins validates each full synthetic plugin and compares the
// normalised manifest (or, for invalid ones, the problem list) with its
// golden file. Run with -update to rewrite them.
func TestGoldenPlugins(t *testing.T) {
	paths, err := filepath.Glob("testdata/plugins/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			m, problems := Validate(loadFixture(t, path).exports())
			wantValid := !strings.HasPrefix(name, "invalid")
			if wantValid != (m != nil) {
				t.Fatalf("valid = %v, want %v; problems: %v", m != nil, wantValid, problems)
			}
			var got any = problems
			if m != nil {
				got = struct {
					Manifest *Manifest `json:"manifest"`
					Hooks    HookSet   `json:"hooks"`
				}{m, m.Hooks}
			}
			compareGolden(t, filepath.Join("testdata", "golden", name+".json"), got)
		})
	}
}

// TestNormalisedManifestIsAFixedPoint re-validates each normalised manifest:
// what the admin API shows must itself be an acceptable, unchanged manifest.
func TestNormalisedManifestIsAFixedPoint(t *testing.T) {
	paths, _ := filepath.Glob("testdata/plugins/*.json")
	for _, path := range paths {
		f := loadFixture(t, path)
		first, _ := Validate(f.exports())
		if first == nil {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			encoded, _ := json.Marshal(first)
			var meta any
			if err := json.Unmarshal(encoded, &meta); err != nil {
				t.Fatal(err)
			}
			f.Meta = meta
			second, problems := Validate(f.exports())
			if second == nil {
				t.Fatalf("normalised manifest rejected: %v", problems)
			}
			again, _ := json.Marshal(second)
			if !bytes.Equal(encoded, again) {
				t.Errorf("normalisation is not idempotent:\n%s\n%s", encoded, again)
			}
		})
	}
}

func compareGolden(t *testing.T, path string, got any) {
	t.Helper()
	encoded, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	encoded = append(encoded, '\n')
	if *update {
		if err := os.WriteFile(path, encoded, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, encoded) {
		t.Errorf("%s differs from the golden file:\n%s", path, encoded)
	}
}
