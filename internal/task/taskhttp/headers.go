package taskhttp

import "net/http"

// credentialHeaders never reach hooks: they carry the gateway key or the
// caller's session, not anything meant for the upstream.
var credentialHeaders = map[string]bool{"Authorization": true, "X-Api-Key": true, "X-Alt-Api-Key": true,
	"X-Goog-Api-Key": true, "Cookie": true, "Proxy-Authorization": true}

// requestHeaders is the inbound header map hooks see: canonical name →
// first value, without credentials.
func requestHeaders(h http.Header) map[string]any {
	out := map[string]any{}
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		if credentialHeaders[ck] || len(vs) == 0 {
			continue
		}
		out[ck] = vs[0]
	}
	return out
}
