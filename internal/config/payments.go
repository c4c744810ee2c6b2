package config

import (
	"fmt"
	"math"
	"strings"
)

// Payments configures top-ups by card (CONTRACT.md §17); they are off
// while no provider is configured.
type Payments struct {
	Stripe   Stripe  `yaml:"stripe"`
	Currency string  `yaml:"currency"`
	MinUSD   float64 `yaml:"min_usd"`
	MaxUSD   float64 `yaml:"max_usd"`
}

// Stripe is the Stripe account top-ups are paid into.
type Stripe struct {
	SecretKey     string `yaml:"secret_key"`
	WebhookSecret string `yaml:"webhook_secret"`
	// APIBase is the API's origin, without /v1; tests point it at a fake.
	APIBase string `yaml:"api_base"`
}

// DefaultStripeAPIBase is the public Stripe API.
const DefaultStripeAPIBase = "https://api.stripe.com"

// Enabled reports whether Stripe top-ups are configured.
func (s Stripe) Enabled() bool { return s.SecretKey != "" }

// Base is APIBase without a trailing slash or /v1, defaulting to the
// public API.
func (s Stripe) Base() string {
	b := strings.TrimRight(s.APIBase, "/")
	b = strings.TrimSuffix(b, "/v1")
	if b == "" {
		return DefaultStripeAPIBase
	}
	return b
}

func defaultPayments() Payments {
	return Payments{Currency: "usd", MinUSD: 1, MaxUSD: 1000}
}

func (p Payments) validate() []string {
	var errs []string
	if !p.Stripe.Enabled() {
		return nil
	}
	if p.Stripe.WebhookSecret == "" {
		errs = append(errs, "payments.stripe.webhook_secret is required with payments.stripe.secret_key: without it no payment could ever be credited")
	}
	if b := p.Stripe.APIBase; b != "" && !strings.HasPrefix(b, "https://") && !strings.HasPrefix(b, "http://") {
		errs = append(errs, "payments.stripe.api_base must be an http(s) origin")
	}
	if c := p.Currency; len(c) != 3 || strings.ToLower(c) != c || strings.Trim(c, "abcdefghijklmnopqrstuvwxyz") != "" {
		errs = append(errs, fmt.Sprintf("payments.currency %q must be a three-letter lower-case ISO code such as usd", c))
	}
	if !(p.MinUSD > 0) || math.IsInf(p.MinUSD, 0) {
		errs = append(errs, "payments.min_usd must be positive")
	}
	if !(p.MaxUSD >= p.MinUSD) || p.MaxUSD > 1_000_000 {
		errs = append(errs, "payments.max_usd must be at least min_usd and at most 1000000")
	}
	return errs
}

// paymentEnvVars are the payments settings' environment names; config.go
// joins them to the main table.
var paymentEnvVars = []envVar{
	{"TURNPIKE_PAYMENTS_STRIPE_SECRET_KEY", str(func(c *Config) *string { return &c.Payments.Stripe.SecretKey })},
	{"TURNPIKE_PAYMENTS_STRIPE_WEBHOOK_SECRET", str(func(c *Config) *string { return &c.Payments.Stripe.WebhookSecret })},
	{"TURNPIKE_PAYMENTS_STRIPE_API_BASE", str(func(c *Config) *string { return &c.Payments.Stripe.APIBase })},
	{"TURNPIKE_PAYMENTS_CURRENCY", str(func(c *Config) *string { return &c.Payments.Currency })},
	{"TURNPIKE_PAYMENTS_MIN_USD", decimal("TURNPIKE_PAYMENTS_MIN_USD", func(c *Config) *float64 { return &c.Payments.MinUSD })},
	{"TURNPIKE_PAYMENTS_MAX_USD", decimal("TURNPIKE_PAYMENTS_MAX_USD", func(c *Config) *float64 { return &c.Payments.MaxUSD })},
}
