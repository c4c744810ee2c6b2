package egress

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/guardfetch"
)

func TestParseContentDescriptorKeepsCredentialsOnTheirHosts(t *testing.T) {
	base, _ := url.Parse("https://api.vendor.test")
	pol := Policy{Channel: base, Allowed: []string{"files.vendor.test"}}
	tests := []struct {
		name    string
		desc    map[string]any
		wantErr string
	}{
		{"credentialed on the channel host", map[string]any{"url": "https://api.vendor.test/v", "headers": map[string]any{"Authorization": "k"}}, ""},
		{"credentialed on an allowed host", map[string]any{"url": "https://files.vendor.test/v"}, ""},
		{"credentialed elsewhere", map[string]any{"url": "https://cdn.other.test/v"}, "neither the channel's host"},
		{"credentialed POST", map[string]any{"url": "https://api.vendor.test/v", "method": "POST"}, "GET or HEAD"},
		{"credentialless anywhere", map[string]any{"url": "https://cdn.other.test/v", "credentialless": true}, ""},
		{"credentialless with headers", map[string]any{"url": "https://cdn.other.test/v", "credentialless": true, "headers": map[string]any{"X": "1"}}, "must not set headers"},
		{"credentialless with a body", map[string]any{"url": "https://cdn.other.test/v", "credentialless": true, "body": "x"}, "must not have a body"},
		{"credentialless POST", map[string]any{"url": "https://cdn.other.test/v", "credentialless": true, "method": "POST"}, "GET or HEAD"},
	}
	for _, tt := range tests {
		_, err := ParseContentDescriptor(tt.desc, pol)
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestPrivateAddresses(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true}, {"10.1.2.3", true}, {"192.168.0.1", true}, {"172.16.0.1", true},
		{"169.254.169.254", true}, {"0.0.0.0", true}, {"0.1.2.3", true}, {"100.64.0.1", true},
		{"100.100.100.200", true}, {"168.63.129.16", true}, {"192.0.0.192", true}, {"198.18.0.1", true},
		{"255.255.255.255", true}, {"240.0.0.1", true}, {"224.0.0.1", true},
		{"::1", true}, {"::", true}, {"fe80::1", true}, {"fd00::1", true}, {"fd00:ec2::254", true}, {"fec0::1", true},
		{"::ffff:10.0.0.1", true}, {"::ffff:127.0.0.1", true}, {"::ffff:168.63.129.16", true}, {"::10.0.0.1", true},
		{"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::7f00:1", true}, {"64:ff9b:1::1", true}, {"2001:db8::1", true},
		{"8.8.8.8", false}, {"168.63.129.17", false}, {"100.128.0.1", false}, {"2606:4700::1111", false}, {"::ffff:8.8.8.8", false},
	}
	for _, tt := range tests {
		if got := guardfetch.PrivateAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("PrivateAddr(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	g := Guard{credentialless: true, lookup: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
	}}
	for _, raw := range []string{"http://localhost:8080/x", "http://internal.corp.test/x"} {
		u, _ := url.Parse(raw)
		if err := g.CheckURL(context.Background(), u); err == nil {
			t.Errorf("%s was allowed", raw)
		}
	}
}
