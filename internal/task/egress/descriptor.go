package egress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Descriptor is a validated HTTP request a build hook asked the host to send.
type Descriptor struct {
	URL          *url.URL
	Method       string
	Headers      map[string]string
	Body         any // string, or any JSON value; nil for none
	HasBody      bool
	BodyType     string // "json" or "multipart"
	Parts        []Part
	ResponseType string // "json" or "sse"
	Action       string
	Model        string
}

// Part is one multipart part: a value, or a file by reference.
type Part struct {
	Name     string
	Value    string
	FileRef  string
	Filename string
}

// Policy is what a descriptor's URL may reach: the channel's host and
// the plugin's allowedHosts, ports included.
type Policy struct {
	Channel *url.URL
	Allowed []string
}

// hopHeaders are managed by the HTTP client; a plugin setting them would
// either be ignored or corrupt the framing.
var hopHeaders = map[string]bool{"host": true, "content-length": true, "transfer-encoding": true,
	"connection": true, "keep-alive": true, "upgrade": true, "te": true, "trailer": true, "proxy-connection": true}

// DescriptorError is a descriptor the host refuses to send. The message
// names the field; it never echoes header values, which may hold secrets.
type DescriptorError struct{ msg string }

func (e *DescriptorError) Error() string { return "invalid request descriptor: " + e.msg }

func Errorf(format string, args ...any) error { return &DescriptorError{fmt.Sprintf(format, args...)} }

// ParseDescriptor validates what a build hook returned.
func ParseDescriptor(v any, pol Policy) (*Descriptor, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf("the hook must return an object {url, method?, headers?, body?}")
	}
	d := &Descriptor{Method: http.MethodPost, BodyType: "json", ResponseType: "json"}
	raw, _ := m["url"].(string)
	u, err := checkURL(raw, pol)
	if err != nil {
		return nil, err
	}
	d.URL = u
	if err := d.readScalars(m); err != nil {
		return nil, err
	}
	if d.Headers, err = readHeaders(m["headers"]); err != nil {
		return nil, err
	}
	if body, ok := m["body"]; ok && body != nil {
		d.Body, d.HasBody = body, true
	}
	if d.BodyType == "multipart" {
		if d.Parts, err = readParts(m["parts"]); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (d *Descriptor) readScalars(m map[string]any) error {
	for _, f := range []struct {
		name  string
		dst   *string
		allow []string
	}{
		{"method", &d.Method, []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}},
		{"bodyType", &d.BodyType, []string{"json", "multipart"}},
		{"responseType", &d.ResponseType, []string{"json", "sse"}},
		{"action", &d.Action, nil},
		{"model", &d.Model, nil},
	} {
		v, present := m[f.name]
		if !present || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return Errorf("%s must be a string", f.name)
		}
		if f.name == "method" {
			s = strings.ToUpper(s)
		}
		if s == "" {
			continue
		}
		if f.allow != nil && !contains(f.allow, s) {
			return Errorf("%s must be one of %s", f.name, strings.Join(f.allow, ", "))
		}
		*f.dst = s
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkURL parses an absolute http(s) URL and checks its host:port against
// the policy.
func checkURL(raw string, pol Policy) (*url.URL, error) {
	if raw == "" {
		return nil, Errorf("url is required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, Errorf("url must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, Errorf("url must not carry credentials")
	}
	if !pol.allows(u) {
		return nil, Errorf("url host %s is neither the channel's host nor in meta.allowedHosts", HostPort(u))
	}
	return u, nil
}

// HostPort is u's lower-cased host with its effective port.
func HostPort(u *url.URL) string {
	return net.JoinHostPort(strings.ToLower(u.Hostname()), effectivePort(u))
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			return strconv.Itoa(n)
		}
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func (p Policy) allows(u *url.URL) bool {
	target := HostPort(u)
	if p.Channel != nil && p.Channel.Host != "" && HostPort(p.Channel) == target {
		return true
	}
	for _, entry := range p.Allowed {
		if allowedEntry(entry, u) == target {
			return true
		}
	}
	return false
}

// allowedEntry expands an allowedHosts entry to host:port. An entry without
// a port means the default port of the URL's scheme, so "api.x.com" never
// opens api.x.com:8443.
func allowedEntry(entry string, u *url.URL) string {
	entry = strings.ToLower(entry)
	if h, port, err := net.SplitHostPort(entry); err == nil {
		return net.JoinHostPort(h, port)
	}
	return net.JoinHostPort(strings.Trim(entry, "[]"), defaultPort(u.Scheme))
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

func readHeaders(v any) (map[string]string, error) {
	out := map[string]string{}
	if v == nil {
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf("headers must be an object of name → string")
	}
	for name, val := range m {
		if name == "" || strings.ContainsAny(name, " \t\r\n:") {
			return nil, Errorf("header name %q is not valid", name)
		}
		var s string
		switch x := val.(type) {
		case nil:
			continue
		case string:
			s = x
		case int64, float64, bool, json.Number:
			s = fmt.Sprint(x)
		default:
			return nil, Errorf("header %s must be a string", name)
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			return nil, Errorf("header %s holds a line break", name)
		}
		// An empty value means "not set": plugins pass through optional
		// client headers that may be missing.
		if s == "" || hopHeaders[strings.ToLower(name)] {
			continue
		}
		out[name] = s
	}
	return out, nil
}

func readParts(v any) ([]Part, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, Errorf("parts must be an array when bodyType is multipart")
	}
	parts := make([]Part, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, Errorf("parts[%d] must be an object {name, value?, fileRef?, filename?}", i)
		}
		var p Part
		p.Name, _ = m["name"].(string)
		if p.Name == "" {
			return nil, Errorf("parts[%d].name is required", i)
		}
		p.FileRef, _ = m["fileRef"].(string)
		p.Filename, _ = m["filename"].(string)
		switch val := m["value"].(type) {
		case nil:
		case string:
			p.Value = val
		case map[string]any, []any:
			b, _ := json.Marshal(val)
			p.Value = string(b)
		default:
			p.Value = fmt.Sprint(val)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// request builds the HTTP request. Files named by multipart parts come from
// files; a missing one is the plugin's error, reported by ref.
func (d *Descriptor) Request(ctx context.Context, files FileResolver) (*http.Request, error) {
	body, contentType, err := d.encodeBody(files)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, d.Method, d.URL.String(), body)
	if err != nil {
		return nil, Errorf("the request cannot be built")
	}
	if s, ok := body.(interface{ size() int64 }); ok {
		req.ContentLength = s.size()
	}
	for k, v := range d.Headers {
		req.Header.Set(k, v)
	}
	if contentType != "" && (req.Header.Get("Content-Type") == "" || d.BodyType == "multipart") {
		req.Header.Set("Content-Type", contentType)
	}
	return req, nil
}

func (d *Descriptor) encodeBody(files FileResolver) (io.Reader, string, error) {
	if d.BodyType == "multipart" {
		return encodeMultipart(d.Parts, budgetOf(files))
	}
	if !d.HasBody || d.Method == http.MethodGet || d.Method == http.MethodHead {
		return nil, "", nil
	}
	if s, ok := d.Body.(string); ok {
		return strings.NewReader(s), "", nil
	}
	inlined, err := inlineFiles(d.Body, budgetOf(files))
	if err != nil {
		return nil, "", err
	}
	b, err := json.Marshal(inlined)
	if err != nil {
		return nil, "", Errorf("body cannot be encoded as JSON")
	}
	return bytes.NewReader(b), "application/json", nil
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }
