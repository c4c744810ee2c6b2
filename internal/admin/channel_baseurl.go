package admin

import (
	"net/url"
	"regexp"
	"strings"
)

// endpointSuffixes are the paths the gateway itself appends to a channel's
// base_url. A base_url that already ends in one would have it twice
// (…/v1/chat/completions/v1/chat/completions) and every call would fail.
var endpointSuffixes = []string{
	"/chat/completions", "/completions", "/messages", "/responses", "/embeddings", "/moderations", "/rerank",
	"/images/generations", "/images/edits", "/audio/speech", "/audio/transcriptions", "/audio/translations",
	"/messages/count_tokens", "/batches", "/files",
}

// geminiAction is a Gemini method path: /models/<model>:<method>.
var geminiAction = regexp.MustCompile(`/models/[^/]+:[A-Za-z]+$`)

// endpointBase reports a base_url given with a full endpoint path, and the
// base to use instead: the address with the endpoint (and a version
// segment before it) taken off, the origin in the usual case.
func endpointBase(raw string) (base string, isEndpoint bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", false
	}
	p := strings.TrimRight(u.Path, "/")
	cut := -1
	if loc := geminiAction.FindStringIndex(p); loc != nil {
		cut = loc[0]
	}
	for _, s := range endpointSuffixes {
		if strings.HasSuffix(p, s) {
			cut = len(p) - len(s)
			break
		}
	}
	if cut < 0 {
		return "", false
	}
	p = p[:cut]
	for _, v := range []string{"/v1beta", "/v1"} {
		p = strings.TrimSuffix(p, v)
	}
	return u.Scheme + "://" + u.Host + p, true
}
