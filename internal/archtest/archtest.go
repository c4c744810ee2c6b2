// Package archtest holds the dependency rules of docs/ARCHITECTURE.md as a
// table and checks them against the import graph `go list` reports, so that
// a forbidden import fails `go test ./internal/archtest`.
package archtest

import (
	"fmt"
	"sort"
	"strings"
)

// Module is the module path; rules and graphs use paths relative to it.
const Module = "github.com/turnpike-gw/turnpike/"

// Package is one package of the graph: its production imports and the
// imports its _test files add (in-package and external tests together).
type Package struct {
	Path        string
	Imports     []string
	TestImports []string
}

// Rule is one row of the map. Who names packages a rule is about; a path
// ending in "/..." means the package and everything under it. A Subject
// outside the module (database/sql, a third-party module) makes the rule
// say which packages own that dependency.
type Rule struct {
	Name string
	// Subject is the package (pattern) the rule protects or constrains.
	Subject string
	// ImportedOnlyBy lists the only packages that may import Subject in
	// production code; empty means the rule is not about importers.
	ImportedOnlyBy []string
	// TestsMayImport is true when any package's tests may import Subject.
	TestsMayImport bool
	// MayImport lists the only internal packages Subject may import (nil:
	// not about Subject's imports; empty non-nil: none).
	MayImport []string
}

// Violation is one import the map forbids.
type Violation struct {
	Rule, From, To string
	Test           bool
}

func (v Violation) String() string {
	kind := "imports"
	if v.Test {
		kind = "imports in tests"
	}
	return fmt.Sprintf("%s: %s %s %s", v.Rule, v.From, kind, v.To)
}

// match reports whether path is pattern or, for "x/...", under x.
func match(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func matchAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if match(p, path) {
			return true
		}
	}
	return false
}

func internal(path string) bool { return strings.HasPrefix(path, "internal/") }

// Check returns every import in graph that rules forbid, sorted.
func Check(rules []Rule, graph []Package) []Violation {
	var out []Violation
	for _, r := range rules {
		for _, p := range graph {
			out = append(out, checkOne(r, p)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func checkOne(r Rule, p Package) []Violation {
	var out []Violation
	edges := func(imports []string, test bool) {
		for _, to := range imports {
			if to == p.Path {
				continue
			}
			if r.ImportedOnlyBy != nil && match(r.Subject, to) && !match(r.Subject, p.Path) &&
				!matchAny(r.ImportedOnlyBy, p.Path) && !(test && r.TestsMayImport) {
				out = append(out, Violation{Rule: r.Name, From: p.Path, To: to, Test: test})
			}
			if r.MayImport != nil && !test && internal(to) && match(r.Subject, p.Path) && !matchAny(r.MayImport, to) {
				out = append(out, Violation{Rule: r.Name, From: p.Path, To: to})
			}
		}
	}
	edges(p.Imports, false)
	edges(p.TestImports, true)
	return out
}
