package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Registration says whether people may create their own accounts
// (POST /api/auth/register, and a first OpenID Connect sign-in) and what a
// new account starts with.
type Registration struct {
	Enabled      bool   `yaml:"enabled"`
	DefaultGroup string `yaml:"default_group"`
	// InitialQuota is given to a new account as a recorded top-up.
	InitialQuota int64 `yaml:"initial_quota"`
}

// Group is the group new accounts join: DefaultGroup, or "default".
func (r Registration) Group() string {
	if r.DefaultGroup == "" {
		return "default"
	}
	return r.DefaultGroup
}

// OIDC configures sign-in with an OpenID Connect provider; it is off while
// Issuer is empty.
type OIDC struct {
	Issuer        string   `yaml:"issuer"`
	ClientID      string   `yaml:"client_id"`
	ClientSecret  string   `yaml:"client_secret"`
	Scopes        []string `yaml:"scopes"`
	UsernameClaim string   `yaml:"username_claim"`
}

// Enabled reports whether an issuer is configured.
func (o OIDC) Enabled() bool { return o.Issuer != "" }

// ScopeList is Scopes, defaulting to openid, profile and email; openid is
// always included because the flow is not OpenID Connect without it.
func (o OIDC) ScopeList() []string {
	s := o.Scopes
	if len(s) == 0 {
		s = []string{"openid", "profile", "email"}
	}
	for _, v := range s {
		if v == "openid" {
			return s
		}
	}
	return append([]string{"openid"}, s...)
}

// Claim is the ID-token claim that names a new account: UsernameClaim, or
// preferred_username.
func (o OIDC) Claim() string {
	if o.UsernameClaim == "" {
		return "preferred_username"
	}
	return o.UsernameClaim
}

func (c *Config) validateAccounts() []string {
	var errs []string
	if c.Registration.InitialQuota < 0 {
		errs = append(errs, "registration.initial_quota must not be negative")
	}
	if o := c.OIDC; o.Enabled() {
		if !strings.HasPrefix(o.Issuer, "https://") && !strings.HasPrefix(o.Issuer, "http://") {
			errs = append(errs, "oidc.issuer must be an http(s) URL")
		}
		if o.ClientID == "" {
			errs = append(errs, "oidc.client_id is required with oidc.issuer")
		}
	}
	return errs
}

func boolean(name string, dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("config: %s must be true or false, got %q", name, v)
		}
		*dst(c) = b
		return nil
	}
}

// accountsEnvVars are the accounts settings, kept beside their types;
// envVars is the one table Load reads, built at package initialisation
// without an init function.
var accountsEnvVars = []envVar{
	{"TURNPIKE_REGISTRATION_ENABLED", boolean("TURNPIKE_REGISTRATION_ENABLED", func(c *Config) *bool { return &c.Registration.Enabled })},
	{"TURNPIKE_REGISTRATION_DEFAULT_GROUP", str(func(c *Config) *string { return &c.Registration.DefaultGroup })},
	{"TURNPIKE_REGISTRATION_INITIAL_QUOTA", func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("config: TURNPIKE_REGISTRATION_INITIAL_QUOTA must be an integer, got %q", v)
		}
		c.Registration.InitialQuota = n
		return nil
	}},
	{"TURNPIKE_OIDC_ISSUER", str(func(c *Config) *string { return &c.OIDC.Issuer })},
	{"TURNPIKE_OIDC_CLIENT_ID", str(func(c *Config) *string { return &c.OIDC.ClientID })},
	{"TURNPIKE_OIDC_CLIENT_SECRET", str(func(c *Config) *string { return &c.OIDC.ClientSecret })},
	{"TURNPIKE_OIDC_SCOPES", func(c *Config, v string) error {
		c.OIDC.Scopes = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
		return nil
	}},
	{"TURNPIKE_OIDC_USERNAME_CLAIM", str(func(c *Config) *string { return &c.OIDC.UsernameClaim })},
}
