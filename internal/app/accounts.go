package app

import (
	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/admin"
)

// accountDeps builds the accounts features: their tables, and the OpenID
// Connect client when an issuer is configured. The provider is called back
// at ServerAddress, so that must be the address browsers use.
func (a *App) accountDeps() admin.AccountDeps {
	d := admin.AccountDeps{Store: accounts.NewStore(a.sql, a.Config.CryptoSecret), Registration: a.Config.Registration}
	if a.Config.OIDC.Enabled() {
		d.OIDC = accounts.NewOIDC(a.Config.OIDC, a.Config.Address()+"/api/auth/oidc/callback", a.Config.CryptoSecret)
	}
	return d
}
