package upstream

import (
	"net/http"
	"strings"
)

// Target is one channel as an adapter needs it, for one attempt.
type Target struct {
	Type     int
	BaseURL  string
	Key      string
	Settings map[string]any
	// Model is the upstream model name after mapping.
	Model string
	// Client makes the adapter's own side requests (a token exchange, a
	// model list); nil uses http.DefaultClient.
	Client *http.Client
}

// Setting returns a string setting of the channel.
func (t Target) Setting(name string) string {
	if v, ok := t.Settings[name].(string); ok {
		return v
	}
	return ""
}

// HTTP is the client for the adapter's side requests.
func (t Target) HTTP() *http.Client {
	if t.Client != nil {
		return t.Client
	}
	return http.DefaultClient
}

// Base is the channel's origin, or def when the channel gives none.
func (t Target) Base(def string) string {
	if b := NormalizeBaseURL(t.BaseURL); b != "" {
		return b
	}
	return def
}

// PathPrefix is settings.path_prefix when the channel sets one (an empty
// string included: a provider serving /chat/completions at its root), else
// def.
func (t Target) PathPrefix(def string) string {
	v, ok := t.Settings["path_prefix"].(string)
	if !ok {
		return def
	}
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v != "" && !strings.HasPrefix(v, "/") {
		v = "/" + v
	}
	return v
}

// JoinPrefix puts an OpenAI-style /v1 path under prefix on base, without
// doubling a prefix the administrator already typed into the address.
func JoinPrefix(base, prefix, path string) string {
	rest := strings.TrimPrefix(path, "/v1")
	if prefix != "" && strings.HasSuffix(base, prefix) {
		return base + rest
	}
	return base + prefix + rest
}

// ApplyHeaders sets the channel's static extra headers
// (settings.headers) on an upstream request. They are the administrator's
// and may carry secrets, so they are never logged.
func ApplyHeaders(req *http.Request, t Target) {
	hs, _ := t.Settings["headers"].(map[string]any)
	for k, v := range hs {
		if s, ok := v.(string); ok {
			req.Header.Set(k, s)
		}
	}
}

func newJSONRequest(req *http.Request, stream bool) *http.Request {
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req
}
