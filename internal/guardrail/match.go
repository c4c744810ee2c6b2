// Package guardrail checks the text of model calls before they reach an
// upstream and before an answer reaches the client (CONTRACT §21): built-in
// scanners for personal data and key shapes, the root's own patterns, a
// prompt size limit and custom checks run by a plugin. It holds no state
// beyond an immutable set of compiled guardrails swapped atomically; the
// relay calls it through its hooks and never sees a scanner.
package guardrail

// Match is one span a scanner found: byte offsets into the scanned text
// and the kind of data it is ("card", "email", "aws_key", …). The matched
// text itself is never kept beyond the check.
type Match struct {
	Start, End int
	Kind       string
}

// The kinds of data the built-in scanners report.
const (
	KindEmail      = "email"
	KindPhone      = "phone"
	KindCard       = "card"
	KindIBAN       = "iban"
	KindSSN        = "ssn"
	KindIPv4       = "ipv4"
	KindIPv6       = "ipv6"
	KindOpenAIKey  = "openai_key"
	KindAWSKey     = "aws_key"
	KindGitHub     = "github_token"
	KindPrivateKey = "private_key"
	KindSlack      = "slack_token"
	KindGoogleKey  = "google_api_key"
	KindStripe     = "stripe_key"
	KindGitLab     = "gitlab_token"
	KindJWT        = "jwt"
	KindPattern    = "pattern"
	KindTokens     = "input_tokens"
	KindPlugin     = "plugin"
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isAlpha(c byte) bool { return isUpper(c) || isLower(c) }
func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// isWordByte is a byte that continues an identifier or a number: a span
// touching one is part of something larger (a hash, an id, a path) and is
// not taken as personal data.
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' || c >= 0x80 }

// before is the byte before i, or a space at the start.
func before(s string, i int) byte {
	if i <= 0 {
		return ' '
	}
	return s[i-1]
}

// at is the byte at i, or a space past the end.
func at(s string, i int) byte {
	if i >= len(s) {
		return ' '
	}
	return s[i]
}
