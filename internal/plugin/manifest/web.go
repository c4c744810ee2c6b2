package manifest

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of address-like fields.
const (
	maxIconLength    = 128
	maxBaseURLLength = 191
)

// iconSchemes are URL schemes an icon name must not start with.
var iconSchemes = []string{"http", "https", "data", "javascript", "vbscript", "file", "blob", "ftp", "ws", "wss"}

func (v *validator) icon(m *Manifest, path string, value any) {
	s, ok := v.stringValue(path, value)
	if !ok || s == "" {
		return
	}
	if msg := checkIcon(s); msg != "" {
		v.addf(path, "%s", msg)
		return
	}
	m.Icon = s
}

func checkIcon(s string) string {
	lower := strings.ToLower(s)
	switch {
	case utf8.RuneCountInString(s) > maxIconLength:
		return "is longer than 128 characters"
	case strings.Contains(s, "://") || strings.HasPrefix(s, "//"):
		return "must not be a URL; use an icon-library name, text or text:<label>"
	case strings.Contains(s, "<") || strings.Contains(s, ">"):
		return "must not be inline SVG or markup"
	case s == "text":
		return ""
	case strings.HasPrefix(s, "text:"):
		label := s[len("text:"):]
		if strings.TrimSpace(label) == "" || hasControl(label) {
			return "text:<label> needs a printable label"
		}
		return ""
	}
	scheme, _, hasColon := strings.Cut(lower, ":")
	for _, bad := range iconSchemes {
		if hasColon && scheme == bad {
			return "must not be a URL or inline image; use an icon-library name, text or text:<label>"
		}
	}
	return ""
}

func (v *validator) website(m *Manifest, path string, value any) {
	s, ok := v.stringValue(path, value)
	if !ok || s == "" {
		return
	}
	if msg := checkWebURL(s, true); msg != "" {
		v.addf(path, "%s", msg)
		return
	}
	m.Website = s
}

// checkWebURL validates an absolute web address shown to administrators:
// SPEC.md asks for an HTTP(S) address (author.url) or a valid HTTPS URL
// (website), and nothing more.
func checkWebURL(s string, httpsOnly bool) string {
	if hasControl(s) || strings.ContainsAny(s, " \\") {
		return "is not a valid URL"
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "must be an absolute URL with a host"
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case httpsOnly && scheme != "https":
		return "must be an https:// URL"
	case scheme != "http" && scheme != "https":
		return "must be an http:// or https:// URL"
	}
	return ""
}

func (v *validator) baseURL(m *Manifest, path string, value any) {
	s, ok := v.stringValue(path, value)
	if !ok || s == "" {
		return
	}
	normal, msg := NormaliseBaseURL(s)
	if msg != "" {
		v.addf(path, "%s", msg)
		return
	}
	m.BaseURL = normal
}

// NormaliseBaseURL checks an upstream base address (http or https, no
// credentials, query or fragment, ASCII host) and returns it with the scheme
// and host lower-cased and trailing slashes removed. The second result is a
// problem description, empty when the address is valid.
func NormaliseBaseURL(s string) (string, string) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return "", "must be ASCII; write an internationalised host name in its xn-- form"
		}
		if s[i] <= 0x20 || s[i] == 0x7f || s[i] == '\\' {
			return "", "must not contain spaces, backslashes or control characters"
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" {
		return "", "is not a valid URL"
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", "must be an http:// or https:// URL"
	case u.User != nil:
		return "", "must not contain credentials"
	case u.RawQuery != "" || u.ForceQuery:
		return "", "must not contain a query string"
	case strings.Contains(s, "#"):
		return "", "must not contain a fragment"
	case u.Host == "" || strings.Contains(u.Host, "%"):
		return "", "must include a plain host name"
	}
	if _, msg := normaliseHostPort(u.Host); msg != "" {
		return "", msg
	}
	out := scheme + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/")
	if len(out) > maxBaseURLLength {
		return "", "is longer than 191 characters"
	}
	return out, ""
}

func (v *validator) allowedHosts(m *Manifest, path string, value any) {
	hosts, _ := v.stringList(path, value, dropDuplicates, func(p, s string) (string, bool) {
		if strings.Contains(s, "://") {
			v.addf(p, "must be host or host:port without a scheme")
			return "", false
		}
		if strings.ContainsAny(s, "/?#@\\ ") || hasControl(s) {
			v.addf(p, "must be host or host:port without path, query or credentials")
			return "", false
		}
		normal, msg := normaliseHostPort(s)
		if msg != "" {
			v.addf(p, "%s", msg)
			return "", false
		}
		return normal, true
	})
	m.AllowedHosts = hosts
}

// normaliseHostPort checks `host`, `host:port` or `[v6]:port` and returns it
// lower-cased with the port in canonical decimal. The second result is a
// problem description, empty when valid.
func normaliseHostPort(s string) (string, string) {
	lower := strings.ToLower(s)
	host, port, hasPort := lower, "", false
	switch {
	case strings.HasPrefix(lower, "["):
		end := strings.Index(lower, "]")
		if end < 0 || !isIPv6(lower[1:end]) {
			return "", "has an invalid IPv6 address"
		}
		host = lower[:end+1]
		if rest := lower[end+1:]; rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", "is not a valid host or host:port"
			}
			port, hasPort = rest[1:], true
		}
	case strings.Count(lower, ":") > 1:
		return "", "must write an IPv6 address in brackets"
	default:
		if h, p, found := strings.Cut(lower, ":"); found {
			host, port, hasPort = h, p, true
		}
		if !validHostname(host) {
			return "", "has an invalid host name"
		}
	}
	if !hasPort {
		return host, ""
	}
	n, err := strconv.Atoi(port)
	if err != nil || port == "" || strings.Trim(port, "0123456789") != "" || n < 1 || n > 65535 {
		return "", "has an invalid port"
	}
	return host + ":" + strconv.Itoa(n), ""
}

func isIPv6(h string) bool {
	return strings.Contains(h, ":") && net.ParseIP(h) != nil
}

// validHostname accepts DNS names (labels of letters, digits, - and _) and
// IPv4 literals.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
