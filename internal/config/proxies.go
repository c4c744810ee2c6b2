package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// TrustedProxies is trusted_proxies (CONTRACT §16): the reverse proxies
// whose X-Forwarded-For or Forwarded header names the client. Each entry
// is a CIDR or a single address; none by default, so no header is
// believed unless the operator says which proxy sets it.
func init() {
	envVars = append(envVars, envVar{"TURNPIKE_TRUSTED_PROXIES", func(c *Config, v string) error {
		c.TrustedProxies = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.TrustedProxies = append(c.TrustedProxies, s)
			}
		}
		return nil
	}})
}

func (c *Config) validateTrustedProxies() []string {
	var errs []string
	for _, s := range c.TrustedProxies {
		s = strings.TrimSpace(s)
		if _, err := netip.ParsePrefix(s); err == nil {
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			continue
		}
		errs = append(errs, fmt.Sprintf("trusted_proxies (TURNPIKE_TRUSTED_PROXIES): %q is neither a CIDR nor an IP address", s))
	}
	return errs
}
