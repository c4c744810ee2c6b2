package manifest

import (
	"slices"
	"strings"
	"testing"
)

// removed marks a field an edit deletes from meta.
type removedField struct{}

var removed = removedField{}

type edit func(meta map[string]any, ex *Exports)

// set assigns (or with removed, deletes) meta fields given as key, value pairs.
func set(kv ...any) edit {
	return func(meta map[string]any, _ *Exports) {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == removed {
				delete(meta, kv[i].(string))
			} else {
				meta[kv[i].(string)] = kv[i+1]
			}
		}
	}
}

// withFunctions exports more function paths.
func withFunctions(paths ...string) edit {
	return func(_ map[string]any, ex *Exports) {
		ex.Functions = append(ex.Functions, paths...)
		ex.Names = topNames(ex.Functions, ex.Names...)
	}
}

// withoutFunctions drops exported function paths.
func withoutFunctions(paths ...string) edit {
	return func(_ map[string]any, ex *Exports) {
		ex.Functions = slices.DeleteFunc(ex.Functions, func(f string) bool { return slices.Contains(paths, f) })
		ex.Names = topNames(ex.Functions, "meta")
	}
}

func withNames(names ...string) edit {
	return func(_ map[string]any, ex *Exports) { ex.Names = append(ex.Names, names...) }
}

func all(edits ...edit) edit {
	return func(meta map[string]any, ex *Exports) {
		for _, e := range edits {
			e(meta, ex)
		}
	}
}

func baseMeta() map[string]any {
	return map[string]any{
		"apiVersion": float64(1),
		"key":        "demo",
		"name":       "Demo",
		"version":    "1.0.0",
		"author":     map[string]any{"name": "Test"},
		"models":     []any{"m1", "m2"},
		"fetchMode":  "per_task",
	}
}

var baseFunctions = []string{"buildSubmitRequest", "parseSubmitResponse", "buildQueryRequest", "parseTaskResult"}

func topNames(functions []string, extra ...string) []string {
	names := slices.Clone(extra)
	for _, f := range functions {
		top, _, _ := strings.Cut(f, ".")
		if !slices.Contains(names, top) {
			names = append(names, top)
		}
	}
	return names
}

func baseExports() Exports {
	fns := slices.Clone(baseFunctions)
	return Exports{Meta: baseMeta(), Functions: fns, Names: topNames(fns, "meta")}
}

// ruleCase is one synthetic manifest: base plus edit. want lists the exact
// problem paths expected, each optionally followed by "|" and a message
// fragment; empty want means the manifest is valid and check inspects it.
type ruleCase struct {
	name  string
	edit  edit
	want  []string
	check func(t *testing.T, m *Manifest)
}

func runCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := baseExports()
			if tc.edit != nil {
				tc.edit(ex.Meta.(map[string]any), &ex)
			}
			m, problems := Validate(ex)
			assertProblems(t, problems, tc.want)
			if len(tc.want) == 0 {
				if m == nil {
					t.Fatal("valid manifest returned nil")
				}
				if tc.check != nil {
					tc.check(t, m)
				}
			} else if m != nil {
				t.Error("invalid manifest returned a non-nil Manifest")
			}
		})
	}
}

func assertProblems(t *testing.T, got Problems, want []string) {
	t.Helper()
	var gotPaths, wantPaths []string
	for _, p := range got {
		gotPaths = append(gotPaths, p.Path)
	}
	for _, w := range want {
		path, fragment, _ := strings.Cut(w, "|")
		wantPaths = append(wantPaths, path)
		if !slices.ContainsFunc(got, func(p Problem) bool {
			return p.Path == path && strings.Contains(p.Message, fragment)
		}) {
			t.Errorf("missing problem %s containing %q; got %v", path, fragment, got)
		}
	}
	slices.Sort(gotPaths)
	slices.Sort(wantPaths)
	if !slices.Equal(slices.Compact(gotPaths), slices.Compact(wantPaths)) {
		t.Errorf("problem paths = %v, want %v (problems: %v)", gotPaths, wantPaths, got)
	}
}

func arr(items ...any) []any { return items }

// listIs checks a normalised list of the manifest, read by get.
func listIs[T comparable](get func(*Manifest) []T, want ...T) func(*testing.T, *Manifest) {
	return func(t *testing.T, m *Manifest) {
		t.Helper()
		if got := get(m); !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	}
}

type obj = map[string]any
