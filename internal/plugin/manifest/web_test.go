package manifest

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestIcon(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "library name with dot", edit: set("icon", "Kling.Color")},
		{name: "iconify prefix", edit: set("icon", "mdi:video-outline")},
		{name: "text", edit: set("icon", "text")},
		{name: "text label", edit: set("icon", "text:I2P")},
		{name: "empty means none", edit: set("icon", "")},
		{name: "https url", edit: set("icon", "https://cdn.example/x.png"), want: []string{"meta.icon|URL"}},
		{name: "protocol-relative url", edit: set("icon", "//cdn.example/x.png"), want: []string{"meta.icon|URL"}},
		{name: "data uri", edit: set("icon", "data:image/png;base64,AAAA"), want: []string{"meta.icon"}},
		{name: "javascript scheme", edit: set("icon", "javascript:alert(1)"), want: []string{"meta.icon"}},
		{name: "inline svg", edit: set("icon", "<svg></svg>"), want: []string{"meta.icon|SVG"}},
		{name: "empty text label", edit: set("icon", "text:"), want: []string{"meta.icon|label"}},
		{name: "library name with a space", edit: set("icon", "my icon")},
		{name: "too long", edit: set("icon", strings.Repeat("a", 129)), want: []string{"meta.icon|128"}},
	})
}

func TestWebsite(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "https", edit: set("website", "https://image2pro.top/api-docs")},
		{name: "empty means none", edit: set("website", "")},
		{name: "http rejected", edit: set("website", "http://example.com"), want: []string{"meta.website|https"}},
		{name: "not a url", edit: set("website", "example.com"), want: []string{"meta.website"}},
		{name: "userinfo is still an https URL", edit: set("website", "https://u@example.com")},
	})
}

func TestSortPriority(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "negative", edit: set("sortPriority", float64(-5)), check: func(t *testing.T, m *Manifest) {
			if m.SortPriority != -5 {
				t.Errorf("sortPriority = %d", m.SortPriority)
			}
		}},
		{name: "int32 max", edit: set("sortPriority", float64(math.MaxInt32))},
		{name: "above int32", edit: set("sortPriority", float64(math.MaxInt32)+1), want: []string{"meta.sortPriority|integer"}},
		{name: "fraction", edit: set("sortPriority", 1.5), want: []string{"meta.sortPriority"}},
		{name: "string", edit: set("sortPriority", "1"), want: []string{"meta.sortPriority"}},
	})
}

func TestBaseURL(t *testing.T) {
	base := func(want string) func(*testing.T, *Manifest) {
		return func(t *testing.T, m *Manifest) {
			if m.BaseURL != want {
				t.Errorf("baseUrl = %q, want %q", m.BaseURL, want)
			}
		}
	}
	runCases(t, []ruleCase{
		{name: "trailing slash stripped", edit: set("baseUrl", "https://API.Example.com/v1/"), check: base("https://api.example.com/v1")},
		{name: "private http allowed", edit: set("baseUrl", "http://192.168.1.10:9000"), check: base("http://192.168.1.10:9000")},
		{name: "ipv6 host", edit: set("baseUrl", "http://[::1]:8080/"), check: base("http://[::1]:8080")},
		{name: "punycode host", edit: set("baseUrl", "https://xn--bcher-kva.example"), check: base("https://xn--bcher-kva.example")},
		{name: "credentials", edit: set("baseUrl", "https://user:pw@example.com"), want: []string{"meta.baseUrl|credentials"}},
		{name: "query", edit: set("baseUrl", "https://example.com/v1?key=1"), want: []string{"meta.baseUrl|query"}},
		{name: "empty query", edit: set("baseUrl", "https://example.com/v1?"), want: []string{"meta.baseUrl|query"}},
		{name: "fragment", edit: set("baseUrl", "https://example.com/#x"), want: []string{"meta.baseUrl|fragment"}},
		{name: "non-ascii host", edit: set("baseUrl", "https://bücher.example"), want: []string{"meta.baseUrl|ASCII"}},
		{name: "ftp scheme", edit: set("baseUrl", "ftp://example.com"), want: []string{"meta.baseUrl|http"}},
		{name: "no host", edit: set("baseUrl", "https:///v1"), want: []string{"meta.baseUrl|host"}},
		{name: "bad port", edit: set("baseUrl", "https://example.com:99999"), want: []string{"meta.baseUrl"}},
		{name: "191 characters fit", edit: set("baseUrl", "https://example.com/"+strings.Repeat("a", 171))},
		{name: "192 characters do not", edit: set("baseUrl", "https://example.com/"+strings.Repeat("a", 172)), want: []string{"meta.baseUrl|191"}},
	})
}

func TestAllowedHosts(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "hosts and ports normalised", edit: set("allowedHosts", arr("CDN.Example.com", "files.example.com:8443", "[::1]:80", "10.0.0.1")),
			check: func(t *testing.T, m *Manifest) {
				want := []string{"cdn.example.com", "files.example.com:8443", "[::1]:80", "10.0.0.1"}
				if !slices.Equal(m.AllowedHosts, want) {
					t.Errorf("allowedHosts = %v, want %v", m.AllowedHosts, want)
				}
			}},
		{name: "duplicate after lowercasing is dropped", edit: set("allowedHosts", arr("a.example", "A.example")),
			check: listIs(func(m *Manifest) []string { return m.AllowedHosts }, "a.example")},
		{name: "same host other port is distinct", edit: set("allowedHosts", arr("a.example", "a.example:8080"))},
		{name: "scheme", edit: set("allowedHosts", arr("https://a.example")), want: []string{"meta.allowedHosts[0]|scheme"}},
		{name: "path", edit: set("allowedHosts", arr("a.example/x")), want: []string{"meta.allowedHosts[0]|path"}},
		{name: "credentials", edit: set("allowedHosts", arr("u@a.example")), want: []string{"meta.allowedHosts[0]"}},
		{name: "port zero", edit: set("allowedHosts", arr("a.example:0")), want: []string{"meta.allowedHosts[0]|port"}},
		{name: "port too large", edit: set("allowedHosts", arr("a.example:65536")), want: []string{"meta.allowedHosts[0]|port"}},
		{name: "empty port", edit: set("allowedHosts", arr("a.example:")), want: []string{"meta.allowedHosts[0]|port"}},
		{name: "bare ipv6", edit: set("allowedHosts", arr("::1")), want: []string{"meta.allowedHosts[0]|brackets"}},
		{name: "invalid label", edit: set("allowedHosts", arr("-a.example")), want: []string{"meta.allowedHosts[0]|host name"}},
		{name: "not an array", edit: set("allowedHosts", "a.example"), want: []string{"meta.allowedHosts|array"}},
	})
}

func TestNormaliseBaseURLKeepsEscapedPath(t *testing.T) {
	got, msg := NormaliseBaseURL("https://example.com/a%20b//")
	if msg != "" || got != "https://example.com/a%20b" {
		t.Errorf("NormaliseBaseURL = %q, %q", got, msg)
	}
}
