package loadtest

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/config"
)

// The benchmark's fixed identities. The key is only ever sent to a loopback
// gateway built for the run, with a throw-away database.
const (
	// BenchModel is the model every unpaced call asks for.
	BenchModel = "bench-model"
	// BenchKey is the API key seeded into the gateway.
	BenchKey  = "sk-turnpike-bench-key"
	benchUser = "bench"
	// CachedSuffix marks the model whose answers the gateway caches.
	CachedSuffix = "-cached"
)

// GatewayConfig is a gateway configuration for a run: BareGatewayConfig
// plus what the fourth wave's capabilities need to be configured but
// unused by the bench calls (ConfigureUnused, which NewGateway runs for it).
func GatewayConfig(dir, upstreamURL string) config.Config {
	cfg := BareGatewayConfig(dir, upstreamURL)
	withUnusedCapabilities(&cfg)
	return cfg
}

// BareGatewayConfig is a gateway configuration for a run: a fresh SQLite
// database in dir, one user with an effectively endless quota, one key, one
// OpenAI channel to upstreamURL and priced models, so billing and the
// request log do their full work on every call.
func BareGatewayConfig(dir, upstreamURL string) config.Config {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database = "sqlite:" + filepath.Join(dir, "turnpike.db")
	cfg.LogLevel = "warn"
	cfg.RootPassword = "bench-root-password"
	cfg.CryptoSecret = "bench-crypto-secret-not-for-production"
	unlimited := int64(-1)
	weight := 1
	models := []string{BenchModel, BenchModel + PacedSuffix, BenchModel + SlowSuffix, BenchModel + CachedSuffix}
	cfg.Seed = config.Seed{
		Groups: map[string]float64{"default": 1},
		Users:  []config.SeedUser{{Username: benchUser, Password: "bench-password", Role: "user", Group: "default", Quota: 1 << 60}},
		Tokens: []config.SeedToken{{Name: "bench", User: benchUser, Key: BenchKey, Quota: &unlimited}},
		Channels: []config.SeedChannel{{Name: "bench-upstream", Type: "openai", BaseURL: upstreamURL, Key: "bench-upstream-key",
			Models: models, Groups: []string{"default"}, Weight: &weight, Status: "enabled", Settings: benchChannelSettings()}},
		Models: map[string]config.SeedPrice{},
	}
	for _, m := range models {
		cfg.Models[m] = config.SeedPrice{InputPerMTok: 0.15, OutputPerMTok: 0.6}
	}
	cfg.Models[BenchModel+CachedSuffix] = config.SeedPrice{InputPerMTok: 0.15, OutputPerMTok: 0.6,
		ResponseCache: map[string]any{"ttl_seconds": 3600}}
	return cfg
}

// NewGateway builds and prepares a gateway for cfg without serving it; the
// caller serves it or uses its Handler, and ends it with CloseGateway.
func NewGateway(ctx context.Context, cfg config.Config, logOut io.Writer) (*app.App, error) {
	a, err := app.New(ctx, cfg, logOut)
	if err != nil {
		return nil, err
	}
	if _, err := a.Prepare(ctx); err != nil {
		CloseGateway(a)
		return nil, err
	}
	if cfg.RootToken == benchRootToken {
		if err := ConfigureUnused(ctx, a.Handler); err != nil {
			CloseGateway(a)
			return nil, fmt.Errorf("configure the unused capabilities: %w", err)
		}
	}
	return a, nil
}

// CloseGateway flushes pending billing records and closes the store of a
// gateway that was never served (Serve does this itself when it returns).
func CloseGateway(a *app.App) {
	_ = a.Writer.Close(context.Background())
	a.Store.Close()
}
