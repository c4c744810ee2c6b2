package egress

import (
	"io"
	"net/url"
	"strings"
	"testing"
)

func policy(base string, allowed ...string) Policy {
	u, _ := url.Parse(base)
	return Policy{Channel: u, Allowed: allowed}
}

func TestDescriptorHostAllowList(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		pol     Policy
		allowed bool
	}{
		{"the channel host", "https://api.v.test/v1/x", policy("https://api.v.test"), true},
		{"the channel host with its explicit default port", "https://api.v.test:443/x", policy("https://api.v.test"), true},
		{"the channel host on another port", "https://api.v.test:8443/x", policy("https://api.v.test"), false},
		{"the channel host with a custom port", "http://127.0.0.1:9000/x", policy("http://127.0.0.1:9000"), true},
		{"a custom-port channel reached on the default port", "http://127.0.0.1/x", policy("http://127.0.0.1:9000"), false},
		{"an allowed host without port on the default port", "https://cdn.v.test/a", policy("https://api.v.test", "cdn.v.test"), true},
		{"an allowed host without port on another port", "https://cdn.v.test:8443/a", policy("https://api.v.test", "cdn.v.test"), false},
		{"an allowed host:port", "https://cdn.v.test:8443/a", policy("https://api.v.test", "cdn.v.test:8443"), true},
		{"an allowed host:port reached on the default port", "https://cdn.v.test/a", policy("https://api.v.test", "cdn.v.test:8443"), false},
		{"host names compare case-insensitively", "https://API.V.TEST/x", policy("https://api.v.test"), true},
		{"an IPv6 allowed host", "http://[::1]:8080/x", policy("https://api.v.test", "[::1]:8080"), true},
		{"a look-alike suffix", "https://api.v.test.evil.test/x", policy("https://api.v.test"), false},
		{"an unrelated host", "https://evil.test/x", policy("https://api.v.test"), false},
		{"no channel URL, allow-list only", "https://cdn.v.test/x", Policy{Allowed: []string{"cdn.v.test"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDescriptor(map[string]any{"url": tt.url}, tt.pol)
			if (err == nil) != tt.allowed {
				t.Errorf("allowed = %v (err %v), want %v", err == nil, err, tt.allowed)
			}
		})
	}
}

func TestDescriptorFieldRules(t *testing.T) {
	pol := policy("https://api.v.test")
	tests := []struct {
		name    string
		desc    map[string]any
		wantErr string
	}{
		{"url is required", map[string]any{}, "url is required"},
		{"a relative url", map[string]any{"url": "/v1/x"}, "absolute http"},
		{"another scheme", map[string]any{"url": "file:///etc/passwd"}, "absolute http"},
		{"credentials in the url", map[string]any{"url": "https://u:p@api.v.test/x"}, "credentials"},
		{"an unknown method", map[string]any{"url": "https://api.v.test/x", "method": "TRACE"}, "method must be"},
		{"headers must be an object", map[string]any{"url": "https://api.v.test/x", "headers": "x"}, "headers must be"},
		{"a header with a line break", map[string]any{"url": "https://api.v.test/x", "headers": map[string]any{"X": "a\r\nB: c"}}, "line break"},
		{"multipart needs parts", map[string]any{"url": "https://api.v.test/x", "bodyType": "multipart"}, "parts must be"},
		{"a part needs a name", map[string]any{"url": "https://api.v.test/x", "bodyType": "multipart", "parts": []any{map[string]any{"value": "v"}}}, "name is required"},
		{"an unknown response type", map[string]any{"url": "https://api.v.test/x", "responseType": "xml"}, "responseType"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDescriptor(tt.desc, pol)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDescriptorBuildsTheRequest(t *testing.T) {
	pol := policy("https://api.v.test")
	d, err := ParseDescriptor(map[string]any{"url": "https://api.v.test/x", "headers": map[string]any{"X-A": "1", "Content-Length": "9", "Empty": ""},
		"body": map[string]any{"a": int64(1)}}, pol)
	if err != nil {
		t.Fatal(err)
	}
	req, err := d.Request(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	if req.Method != "POST" || string(body) != `{"a":1}` || req.Header.Get("Content-Type") != "application/json" ||
		req.Header.Get("X-A") != "1" || req.Header.Get("Empty") != "" || req.Header.Get("Content-Length") != "" {
		t.Errorf("request = %s %v %s", req.Method, req.Header, body)
	}
	d, _ = ParseDescriptor(map[string]any{"url": "https://api.v.test/x", "body": "raw text", "headers": map[string]any{"Content-Type": "text/plain"}}, pol)
	req, _ = d.Request(t.Context(), nil)
	body, _ = io.ReadAll(req.Body)
	if string(body) != "raw text" || req.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("a string body was not sent as is: %q %v", body, req.Header)
	}
}

func TestMultipartPartsResolveRequestFiles(t *testing.T) {
	pol := policy("https://api.v.test")
	d, err := ParseDescriptor(map[string]any{"url": "https://api.v.test/x", "bodyType": "multipart",
		"parts": []any{map[string]any{"name": "prompt", "value": "hi"}, map[string]any{"name": "image", "fileRef": "request_file:image"}}}, pol)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Request(t.Context(), Files{}); err == nil || !strings.Contains(err.Error(), "request_file:image") {
		t.Errorf("a missing file = %v, want an error naming the ref", err)
	}
	files := Files{"request_file:image": {FileReference: FileReference{Ref: "request_file:image", Filename: "a.png", MimeType: "image/png"}, Data: []byte("PNGDATA")}}
	req, err := d.Request(t.Context(), files)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.ParseMultipartForm(1 << 20); err != nil {
		t.Fatal(err)
	}
	if req.FormValue("prompt") != "hi" || req.MultipartForm.File["image"][0].Filename != "a.png" {
		t.Errorf("multipart form = %v", req.MultipartForm)
	}
}

func FuzzParseDescriptor(f *testing.F) {
	f.Add("https://api.v.test/x", "POST", "X-A", "1", "cdn.v.test:8443")
	f.Add("http://[::1]:80/x", "get", "Authorization", "Bearer k", "[::1]")
	f.Add("https://api.v.test:99999/x", "", "", "", "")
	f.Add("https://%zz/", "PUT", "A\nB", "v", "api.v.test")
	f.Fuzz(func(t *testing.T, rawURL, method, hk, hv, allowed string) {
		pol := policy("https://api.v.test", allowed)
		d, err := ParseDescriptor(map[string]any{"url": rawURL, "method": method, "headers": map[string]any{hk: hv}}, pol)
		if err != nil {
			return
		}
		if !pol.allows(d.URL) {
			t.Fatalf("accepted a URL the policy refuses: %s", rawURL)
		}
		if d.URL.Scheme != "http" && d.URL.Scheme != "https" {
			t.Fatalf("accepted scheme %q", d.URL.Scheme)
		}
		if _, err := d.Request(t.Context(), nil); err != nil {
			var de *DescriptorError
			if !asDescriptorError(err, &de) {
				t.Fatalf("request of an accepted descriptor failed oddly: %v", err)
			}
		}
	})
}

func asDescriptorError(err error, de **DescriptorError) bool {
	e, ok := err.(*DescriptorError)
	*de = e
	return ok
}
