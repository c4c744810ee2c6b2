package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPaymentsComeFromYAMLAndTheEnvironmentWins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	yaml := "payments:\n  stripe: {secret_key: sk_yaml, webhook_secret: whsec_yaml, api_base: \"http://127.0.0.1:9/v1/\"}\n  currency: eur\n  min_usd: 5\n  max_usd: 50\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TURNPIKE_PAYMENTS_STRIPE_WEBHOOK_SECRET": "whsec_env", "TURNPIKE_PAYMENTS_MAX_USD": "75.5"}
	cfg, err := Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Payments
	if p.Stripe.SecretKey != "sk_yaml" || p.Stripe.WebhookSecret != "whsec_env" || p.Currency != "eur" || p.MinUSD != 5 || p.MaxUSD != 75.5 {
		t.Fatalf("payments = %+v", p)
	}
	if b := p.Stripe.Base(); b != "http://127.0.0.1:9" {
		t.Fatalf("api base %q: a trailing /v1 must not be doubled", b)
	}
}

func TestPaymentsDefaultsAreOffWithTheContractsBounds(t *testing.T) {
	cfg, err := Load("", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Payments
	if p.Stripe.Enabled() || p.Currency != "usd" || p.MinUSD != 1 || p.MaxUSD != 1000 || p.Stripe.Base() != "https://api.stripe.com" {
		t.Fatalf("defaults = %+v base %s", p, p.Stripe.Base())
	}
}

func TestPaymentsSettingsAreValidated(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no webhook secret", map[string]string{"TURNPIKE_PAYMENTS_STRIPE_SECRET_KEY": "sk"}, "webhook_secret"},
		{"min above max", map[string]string{"TURNPIKE_PAYMENTS_STRIPE_SECRET_KEY": "sk", "TURNPIKE_PAYMENTS_STRIPE_WEBHOOK_SECRET": "w",
			"TURNPIKE_PAYMENTS_MIN_USD": "20", "TURNPIKE_PAYMENTS_MAX_USD": "10"}, "max_usd"},
		{"zero minimum", map[string]string{"TURNPIKE_PAYMENTS_STRIPE_SECRET_KEY": "sk", "TURNPIKE_PAYMENTS_STRIPE_WEBHOOK_SECRET": "w",
			"TURNPIKE_PAYMENTS_MIN_USD": "0"}, "min_usd"},
		{"bad currency", map[string]string{"TURNPIKE_PAYMENTS_STRIPE_SECRET_KEY": "sk", "TURNPIKE_PAYMENTS_STRIPE_WEBHOOK_SECRET": "w",
			"TURNPIKE_PAYMENTS_CURRENCY": "US$"}, "currency"},
		{"api base not a URL", map[string]string{"TURNPIKE_PAYMENTS_STRIPE_SECRET_KEY": "sk", "TURNPIKE_PAYMENTS_STRIPE_WEBHOOK_SECRET": "w",
			"TURNPIKE_PAYMENTS_STRIPE_API_BASE": "api.stripe.com"}, "api_base"},
		{"max not a number", map[string]string{"TURNPIKE_PAYMENTS_MAX_USD": "lots"}, "TURNPIKE_PAYMENTS_MAX_USD"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("", func(k string) string { return tc.env[k] })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
		})
	}
}
