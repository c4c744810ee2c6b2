package task

import (
	"strings"
	"unicode/utf8"
)

// maxClientErrorBytes bounds hook and upstream error text that reaches a
// caller: readable, but never a dump.
const maxClientErrorBytes = 500

// minSecretLen keeps scrubbing from shredding text over trivially short
// "secrets" such as an empty or one-letter key.
const minSecretLen = 4

// scrub removes every secret from s and truncates it for a client.
func scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= minSecretLen {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return Truncate(s, maxClientErrorBytes)
}

// Truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
