package contentlog

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// Redacted replaces every secret in kept content.
const Redacted = "[redacted]"

// minLiteralKey is the shortest channel key replaced wherever it appears:
// shorter ones would match ordinary words.
const minLiteralKey = 8

// Redact replaces in s every key-shaped secret the secrets guardrail knows
// (guardrail.SecretSpans) and every literal key of keys (and each part of
// a composite "access|secret" key) with [redacted]. A body is JSON, where
// a secret may follow an escape ("\nsk-…"): the scan reads a copy whose
// escapes are blanked, of the same length, so its spans are the text's.
func Redact(s string, keys []string) string {
	scan := s
	if strings.IndexByte(s, '\\') >= 0 {
		scan = blankEscapes(s)
	}
	spans := guardrail.SecretSpans(scan)
	for _, k := range literalKeys(keys) {
		for i := 0; ; {
			j := strings.Index(s[i:], k)
			if j < 0 {
				break
			}
			spans = append(spans, guardrail.Match{Start: i + j, End: i + j + len(k)})
			i += j + len(k)
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b guardrail.Match) int { return a.Start - b.Start })
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, m := range spans {
		if m.End <= at {
			continue // inside a span already replaced
		}
		if m.Start >= at {
			b.WriteString(s[at:m.Start])
			b.WriteString(Redacted)
		}
		at = m.End
	}
	b.WriteString(s[at:])
	return b.String()
}

// blankEscapes returns s with every JSON escape pair (\n, \", \\, the \u
// of \uXXXX) turned into two spaces.
func blankEscapes(s string) string {
	b := []byte(s)
	for i := 0; i < len(b)-1; i++ {
		if b[i] == '\\' {
			b[i], b[i+1] = ' ', ' '
			i++
		}
	}
	return string(b)
}

// literalKeys are the keys long enough to replace literally, with the
// parts of a composite key (Bedrock's "access|secret").
func literalKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		if len(k) >= minLiteralKey {
			out = append(out, k)
		}
		if strings.IndexByte(k, '|') < 0 {
			continue
		}
		for part := range strings.SplitSeq(k, "|") {
			if len(part) >= minLiteralKey {
				out = append(out, part)
			}
		}
	}
	return out
}

// newRef is a content's key: its UTC day (which places its object in the
// bucket) and 64 random bits.
func newRef(now time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102") + "-" + hex.EncodeToString(b[:])
}

// validRef reports whether ref has newRef's shape, so a ref read from a
// row can never name another object.
func validRef(ref string) bool {
	if len(ref) != 25 || ref[8] != '-' {
		return false
	}
	if _, err := time.Parse("20060102", ref[:8]); err != nil {
		return false
	}
	_, err := hex.DecodeString(ref[9:])
	return err == nil && strings.ToLower(ref[9:]) == ref[9:]
}
