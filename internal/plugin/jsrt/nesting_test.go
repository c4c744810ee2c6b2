package jsrt

import (
	"strings"
	"testing"
)

func TestCheckNesting(t *testing.T) {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	cases := []struct {
		name   string
		src    string
		reject bool
	}{
		{"ordinary nesting", deep("(", "1", ")", 100), false},
		{"brackets in strings do not count", `const s = "` + strings.Repeat("(", 5000) + `";`, false},
		{"brackets in comments do not count", "// " + strings.Repeat("[", 5000) + "\n/* " + strings.Repeat("{", 5000) + " */", false},
		{"brackets in regex literals do not count", strings.Repeat(`x = s.replace(/[(\[{]/g, "");`+"\n", 3000), false},
		{"escaped brackets in regex literals do not count", strings.Repeat(`x = /\(/.test(s);`+"\n", 3000), false},
		{"division is not a regex", strings.Repeat("x = a / b / c;\n", 3000), false},
		{"template text does not count", "`" + strings.Repeat("(", 5000) + "`", false},
		{"many statements reset the operator count", strings.Repeat("a = b + c * d;\n", 5000), false},
		{"statements without semicolons reset at keywords", strings.Repeat("const a = b + c\n", 5000), false},
		{"long flat array", "[" + strings.Repeat("1,", 50000) + "]", false},
		{"deep parentheses", deep("(", "1", ")", 3000), true},
		{"deep arrays", deep("[", "", "]", 3000), true},
		{"deep blocks", deep("{", "", "}", 3000), true},
		{"deep template substitutions", deep("`${", "1", "}`", 3000), true},
		{"long assignment chain", strings.Repeat("a=", 3000) + "1", true},
		{"long unary chain", strings.Repeat("!", 3000) + "1", true},
		{"long typeof chain", strings.Repeat("typeof ", 3000) + "1", true},
		{"nesting split across levels", strings.Repeat("a = (", 1100) + "1" + strings.Repeat(")", 1100), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkNesting(tc.src)
			if (err != nil) != tc.reject {
				t.Fatalf("checkNesting error = %v, want reject=%v", err, tc.reject)
			}
		})
	}
}

// FuzzCompile checks that no source, however malformed or hostile, panics or
// crashes Compile. Fuzzed loops hit the evaluation deadline, which makes input
// minimisation slow; run with a short -fuzzminimizetime (for example 2s).
func FuzzCompile(f *testing.F) {
	seeds := []string{
		"export const meta = {apiVersion: 1};",
		"export function f(ctx) { return {url: ctx.baseUrl + `/x/${ctx.id}`}; }",
		"export const native = { d(c) { return /[(]/.test(c) ? 1 : 2; } };",
		"import x from 'y';",
		"export async function f() { await 1; }",
		"export function f() { return import('x'); }",
		"export const x = ((((1))));",
		"for (;;) {}",
		"throw new Error('top');",
		"export function* g() { yield* [1, 2]; }",
		"//# sourceMappingURL=data:application/json;base64,e30=\nexport const a = 1;",
		"export { a as default }; const a = 1;",
		"`${`${`",
		"/[/",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		prog, err := compile("fuzz.js", src, 50_000_000) // 50 ms: fuzzed loops must not stall the run
		if err == nil {
			_ = prog.Exports()
		}
	})
}
