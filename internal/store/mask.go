package store

// MaskSecret is the one form in which any secret is shown: an API key in
// its listing, a channel's key and header values, an MCP server's headers,
// the command line and the logs. One rule, so that one secret never shows
// two ways (and so more of it) in two fields: its first and last four
// characters, and nothing of a secret shorter than 12, whose ends would
// be most of it.
func MaskSecret(k string) string {
	switch {
	case k == "":
		return ""
	case len(k) < 12:
		return "****"
	}
	return k[:4] + "..." + k[len(k)-4:]
}
