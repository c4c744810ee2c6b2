package app

import (
	"context"
	"fmt"
)

// startFacts names what an operator checks first after an upgrade: the
// database kind, its schema version and whether balances are shared
// through Redis.
func (a *App) startFacts() string {
	redis := "off"
	if a.Config.Redis != "" {
		redis = "on"
	}
	return fmt.Sprintf("database %s, schema version %d, redis %s", a.sql.Dialect(), a.schema, redis)
}

// freshDatabase reports a database this start created (it applied the
// first migration), which no older release can have seeded.
func (a *App) freshDatabase() bool {
	for _, m := range a.sql.Applied() {
		if m.Version == 1 {
			return true
		}
	}
	return false
}

// warnSecretless names, at start, what an import without secrets left
// unusable, so a half-broken gateway does not start in silence.
func (a *App) warnSecretless(ctx context.Context) {
	c, err := a.sql.CountSecretless(ctx)
	if err != nil {
		a.Log.Warn("could not count records without secrets", "err", err)
		return
	}
	if c.Users > 0 {
		a.Log.Warn("users without a password (imported without secrets): they cannot sign in until one is set (turnpike user reset-password)", "users", c.Users)
	}
	if c.Tokens > 0 {
		a.Log.Warn("API keys without a secret (imported without secrets): they authenticate nothing until rotated (turnpike token rotate)", "keys", c.Tokens)
	}
	if c.Channels > 0 {
		a.Log.Warn("channels without a provider key (imported without secrets, or never given one): set one before they can serve", "channels", c.Channels)
	}
}
