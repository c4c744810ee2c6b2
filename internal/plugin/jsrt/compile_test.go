package jsrt

import (
	"errors"
	"strings"
	"testing"
)

func TestCompileAcceptsSelfContainedModules(t *testing.T) {
	cases := []struct {
		name string
		src  string
	}{
		{"plain hooks", `export const meta = {apiVersion: 1}; export function buildSubmitRequest(ctx) { return {url: ctx.baseUrl}; }`},
		{"generators are fine", `export function* ids() { yield 1; } export function first() { return ids().next().value; }`},
		{"await as a property name", `export function f(o) { return o.await; }`},
		{"async as an identifier", `const async = 1; export function f() { return async; }`},
		{"regex with brackets", `export function f(s) { return s.replace(/[\(\[{]/g, "").replace(/\)/g, ""); }`},
		{"template substitution", "export function f(a) { return `x${a}y${`${a}`}`; }"},
		{"classes and getters", `class A { get x() { return 1; } static m() { return 2; } } export function f() { return new A().x + A.m(); }`},
		{"source map comment is ignored", "export const meta = {};\n//# sourceMappingURL=/etc/passwd\n"},
		{"default export", `export default function () { return 1; }`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Compile("p.js", tc.src); err != nil {
				t.Fatalf("Compile: %v", err)
			}
		})
	}
}

func TestCompileRejectsForbiddenConstructs(t *testing.T) {
	cases := []struct {
		name       string
		src        string
		wantLine   int
		wantColumn int
		wantMsg    string
	}{
		{"static import", "\nimport x from \"y\";\nexport const a = x;", 2, 1, "import declarations are not allowed"},
		{"side-effect import", `import "y";`, 1, 1, "import declarations are not allowed"},
		{"re-export", `export { a } from "y";`, 1, 1, "re-exporting"},
		{"export star", `export * from "y";`, 1, 1, "re-exporting"},
		{"dynamic import", "export function f() {\n  return import(\"x\");\n}", 2, 10, "dynamic import()"},
		{"import.meta", `export function f() { return import.meta; }`, 1, 30, "import.meta"},
		{"async function", "export async function f() {}", 1, 8, "async functions"},
		{"async arrow", "export const f = async () => 1;", 1, 18, "async arrow"},
		{"async method", "export const o = { async m() {} };", 1, 0, "async functions"},
		{"async class method", "class A { async m() {} }", 1, 0, "async functions"},
		{"top-level await", "await 1;", 1, 1, ""},
		{"syntax error position", "export function f() {\n  return 1 +;\n}", 2, 13, "syntax error"},
		{"duplicate declaration", "let a = 1;\nlet a = 2;", 0, 0, "syntax error"},
		{"duplicate export", "export const a = 1; const b = 2; export { b as a };", 0, 0, "Duplicate export"},
		{"top-level throw", `throw new Error("boom");`, 0, 0, "boom"},
		{"top-level infinite loop", `for (;;) {}`, 0, 0, "deadline"},
		{"too deep parens", "export const x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + ";", 1, 0, "nesting is too deep"},
		{"too long assignment chain", "let a; export const x = " + strings.Repeat("a=", 5000) + "1;", 1, 0, "nesting is too deep"},
		{"invalid utf-8", "export const x = \"\xff\";", 0, 0, "UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile("p.js", tc.src)
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile error = %v (%T), want *CompileError", err, err)
			}
			if !strings.Contains(ce.Message, tc.wantMsg) {
				t.Errorf("message %q does not contain %q", ce.Message, tc.wantMsg)
			}
			if tc.wantLine != 0 && ce.Line != tc.wantLine {
				t.Errorf("line = %d, want %d (%v)", ce.Line, tc.wantLine, ce)
			}
			if tc.wantColumn != 0 && ce.Column != tc.wantColumn {
				t.Errorf("column = %d, want %d (%v)", ce.Column, tc.wantColumn, ce)
			}
		})
	}
}

func TestCompileRejectsOversizedSource(t *testing.T) {
	src := "export const x = 1;" + strings.Repeat(" ", MaxSourceBytes)
	_, err := Compile("big.js", src)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("Compile error = %v, want size limit", err)
	}
}

func TestCompileErrorFormatsPosition(t *testing.T) {
	_, err := Compile("plugin.js", "export const x = ;")
	if err == nil || !strings.HasPrefix(err.Error(), "plugin.js:1:") {
		t.Fatalf("error = %v, want plugin.js:1:<col> prefix", err)
	}
}
