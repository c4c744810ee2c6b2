package admin

import (
	"regexp"
	"strings"
	"testing"
)

// The name checks hold their length caps apart from their alphabets (a
// counted repetition costs its program's size for the life of the
// process); they must accept exactly what the counted expressions did.
func TestNameChecksAcceptExactlyWhatTheCountedExpressionsAccepted(t *testing.T) {
	counted := []struct {
		name  string
		check func(string) bool
		was   *regexp.Regexp
		alpha string
		cap   int
	}{
		{"MCP server name", validMCPName, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`), "a_-9Z", 64},
		{"header name", validHeaderName, regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$"), "X-~!#.a9|", 128},
	}
	for _, c := range counted {
		inputs := []string{"", "a", "_a", "-a", "a b", "a\n", "é", "a:b", "Authorization", "x__y",
			strings.Repeat("é", c.cap/2), strings.Repeat("é", c.cap/2+1)}
		for n := c.cap - 2; n <= c.cap+2; n++ {
			inputs = append(inputs, strings.Repeat(c.alpha, n)[:n], "a"+strings.Repeat(c.alpha, n)[:n-1])
		}
		for _, in := range inputs {
			if got, want := c.check(in), c.was.MatchString(in); got != want {
				t.Errorf("%s %q (%d bytes): accepted %v, the counted expression %v", c.name, in, len(in), got, want)
			}
		}
	}
}
