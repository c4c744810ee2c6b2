package config

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	lineRef    = regexp.MustCompile(`^(?:yaml: )?line (\d+):`)
	suggestion = regexp.MustCompile(`did you mean "([^"]*)"\?`)
)

// FuzzYAMLProblems feeds config check's reader of a YAML file (outside
// input: an operator's file) anything: it never panics, every line it names
// (in a problem or in the places of the seed checks) is a line of the
// file, a decoding error gives at least one problem, and a suggestion is
// always a setting that exists.
func FuzzYAMLProblems(f *testing.F) {
	for _, seed := range []string{
		"listen: \":3000\"\nredis: \"\"\n",
		"lisen: \":3000\"\nlog_level: loud\n",
		"channels:\n  - {name: a, type: nope, key: k}\n  - {name: b, typ: openai}\nmodels:\n  m: {input_per_mtok: -1}\n",
		"users:\n  - {username: u, password: p, role: user, quota: x}\ntokens: [{name: k, user: ghost, key: sk-1}]\n",
		"a: &x [*x]\n",
		"\t- bad\n:",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		lines := strings.Count(string(raw), "\n") + 1
		for place, n := range FileLines(raw) {
			if n < 1 || n > lines {
				t.Fatalf("place %q on line %d of a %d-line file", place, n, lines)
			}
		}
		cfg := Defaults()
		err := decodeYAML(raw, &cfg)
		if err == nil {
			return
		}
		problems := yamlProblems(err)
		if len(problems) == 0 {
			t.Fatalf("decoding failed (%v) but no problem was reported", err)
		}
		for _, p := range problems {
			for _, m := range lineRef.FindAllStringSubmatch(p, -1) {
				if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
					t.Fatalf("problem %q names line %d of a %d-line file", p, n, lines)
				}
			}
			if m := suggestion.FindStringSubmatch(p); m != nil && !slices.Contains(knownKeys, m[1]) {
				t.Fatalf("problem %q suggests %q, which is no setting", p, m[1])
			}
		}
	})
}
