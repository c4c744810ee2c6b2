package app

import (
	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/admin"
	"github.com/turnpike-gw/turnpike/internal/payments"
	"strings"
)

// accountDeps builds the accounts features: their tables, and the OpenID
// Connect client when an issuer is configured. The provider is called back
// at ServerAddress, so that must be the address browsers use.
func (a *App) accountDeps() admin.AccountDeps {
	d := admin.AccountDeps{Store: accounts.NewStore(a.Store, a.Config.CryptoSecret), Registration: a.Config.Registration}
	if a.Config.OIDC.Enabled() {
		d.OIDC = accounts.NewOIDC(a.Config.OIDC, a.Config.Address()+"/api/auth/oidc/callback", a.Config.CryptoSecret)
	}
	return d
}

// paymentDeps builds top-ups by card when a Stripe key is configured;
// Stripe sends buyers back to the console at ServerAddress, or, when none
// is set, at the address the buyer reached the console by.
func (a *App) paymentDeps() admin.PaymentDeps {
	d := admin.PaymentDeps{Settings: a.Config.Payments, ConsoleURL: strings.TrimRight(a.Config.ServerAddress, "/")}
	if a.Config.Payments.Stripe.Enabled() {
		d.Stripe = payments.NewStripe(a.Config.Payments.Stripe)
	}
	return d
}
