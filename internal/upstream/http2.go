package upstream

import (
	"net/http"
	"strings"
)

// HTTP2PriorKnowledge is settings.http2 for a channel whose http://
// base_url speaks HTTP/2 without TLS from the first byte (h2c with prior
// knowledge): a sidecar or in-cluster model server. One connection then
// carries many calls at once, as HTTP/2 over TLS does for https:// providers
// on its own, instead of one connection (and one file descriptor) per open
// stream.
const HTTP2PriorKnowledge = "prior_knowledge"

// SpeaksH2C reports a channel that set settings.http2 to prior_knowledge.
func SpeaksH2C(settings map[string]any) bool {
	v, _ := settings["http2"].(string)
	return v == HTTP2PriorKnowledge
}

// H2CTransport is base made to speak HTTP/2 without TLS to http://
// addresses. HTTP/2 over TLS stays on, so a side request of such a channel
// to an https:// address (a token endpoint) still works; HTTP/1 is off,
// because with it on Go would use it for http:// addresses.
func H2CTransport(base *http.Transport) *http.Transport {
	tr := base.Clone()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP2(true)
	tr.Protocols = &p
	return tr
}

// ValidateHTTP2 checks settings.http2: absent, or prior_knowledge on a
// channel with an http:// base_url (an https:// one negotiates HTTP/2 by
// itself, and prior knowledge has no meaning over TLS).
func ValidateHTTP2(t Target) error {
	v, ok := t.Settings["http2"]
	if !ok {
		return nil
	}
	if s, isString := v.(string); !isString || s != HTTP2PriorKnowledge {
		return settingError("settings.http2", "must be %q (HTTP/2 without TLS to an http:// base_url) or left out", HTTP2PriorKnowledge)
	}
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(t.BaseURL)), "http://") {
		return settingError("settings.http2", "%q needs an http:// base_url; https:// addresses negotiate HTTP/2 on their own", HTTP2PriorKnowledge)
	}
	return nil
}
