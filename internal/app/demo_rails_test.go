package app_test

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// CONTRACT §16: serve never accepts the demo's published key or password,
// even when its seed (copied from the README) or database holds them; the
// demo does.
func TestServeRefusesTheDemosPublishedCredentials(t *testing.T) {
	seed := []testkit.Option{
		testkit.WithUsers(config.SeedUser{Username: auth.DemoUser, Password: auth.DemoPassword, Role: "user", Quota: 1000}),
		testkit.WithTokens(config.SeedToken{Name: "demo-key", User: auth.DemoUser, Key: auth.DemoKey}),
	}
	for _, tc := range []struct {
		name   string
		demo   bool
		status int
	}{{"serve", false, 401}, {"demo", true, 200}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append(seed, testkit.WithConfig(func(c *config.Config) { c.Demo = tc.demo }))
			g := testkit.Start(t, opts...)
			if status, body := g.Do(t, "GET", "/v1/models", auth.DemoKey, nil); status != tc.status {
				t.Fatalf("GET /v1/models with the demo key: %d %v, want %d", status, body, tc.status)
			}
			login := map[string]string{"username": auth.DemoUser, "password": auth.DemoPassword}
			if status, body := g.Do(t, "POST", "/api/auth/login", "", login); status != tc.status {
				t.Fatalf("sign-in with the demo password: %d %v, want %d", status, body, tc.status)
			}
		})
	}
}
