package guardrail

// SecretSpans finds the key-shaped secrets the secrets guardrail finds
// (CONTRACT §20's shapes, JSON web tokens and PEM private key blocks), so
// other redactions — the kept contents of logged calls — use the one set
// of patterns instead of a second one that would drift from it.
func SecretSpans(s string) []Match { return scanSecrets(s, nil) }
