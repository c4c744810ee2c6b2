package gemini

import "strings"

// sigPrefix marks, inside the IR, a thought signature that an upstream of this
// format minted. Only those are sent back to such an upstream: a signature
// from another provider would be rejected as corrupt.
const sigPrefix = "gemini:"

// skipSignature is the provider's documented sentinel for replayed function
// calls whose real signature is unknown (history converted from another
// format); newer models refuse such calls without any signature.
const skipSignature = "skip_thought_signature_validator"

func tagSignature(s string) string {
	if s == "" {
		return ""
	}
	return sigPrefix + s
}

// upstreamSignature returns the signature to replay to an upstream, if the IR
// signature came from one.
func upstreamSignature(s string) (string, bool) {
	return strings.CutPrefix(s, sigPrefix)
}

// clientSignature returns the signature to show a client: untagged, so the
// client echoes exactly what the provider sent.
func clientSignature(s string) string {
	t, _ := strings.CutPrefix(s, sigPrefix)
	return t
}

// wantsSentinel reports whether the model requires signatures on replayed
// function calls: generations before 3 do not, and may reject the sentinel.
func wantsSentinel(model string) bool {
	m := strings.ToLower(StripModelPrefix(model))
	if !strings.HasPrefix(m, "gemini-") {
		return false
	}
	return !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

// StripModelPrefix turns a resource name "models/x" into the model id "x".
func StripModelPrefix(s string) string {
	return strings.TrimPrefix(s, "models/")
}
