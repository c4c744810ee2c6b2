// Package testkit starts the real gateway in-process for tests: a fresh
// SQLite database, a seed, a loopback port, and helpers to call it. Every
// package that needs the whole product (e2e, compat, app) builds it here, so
// a change to how the gateway starts is made once.
package testkit

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/config"
)

// startTimeout bounds how long Serve may take to start listening; a loaded
// CI machine with the race detector needs several seconds.
const startTimeout = 15 * time.Second

// Gateway is the real gateway serving on a loopback port.
type Gateway struct {
	// URL is the gateway's base address, "http://127.0.0.1:port". It
	// changes on Restart.
	URL string
	// App is the running composition root; after Stop it still holds the
	// configuration (App.Config.Database names the database file).
	App *app.App

	t      testing.TB
	cfg    config.Config
	log    *logBuffer
	cancel context.CancelFunc
	done   chan error
}

// Start builds the gateway from the options, prepares it (root user, seed)
// and serves it until the test ends or Stop is called. It fails the test if
// the gateway does not come up.
func Start(t testing.TB, opts ...Option) *Gateway {
	t.Helper()
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "turnpike.db")
	cfg.RootPassword = DefaultRootPassword
	cfg.CryptoSecret = "testkit-crypto-secret-0123456789abcdef"
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	g := &Gateway{t: t, cfg: cfg, log: &logBuffer{}}
	t.Cleanup(g.cleanup)
	g.serve()
	return g
}

// serve builds a new App over the configured database and waits until it
// listens.
func (g *Gateway) serve() {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, g.cfg, g.log)
	if err != nil {
		cancel()
		g.t.Fatalf("testkit: app.New: %v", err)
	}
	if _, err := a.Prepare(ctx); err != nil {
		cancel()
		// Serve never ran, so nothing else flushes the writer or closes the
		// store; a leaked SQLite handle keeps TempDir from being removed.
		_ = a.Writer.Close(context.Background())
		a.Store.Close()
		g.t.Fatalf("testkit: Prepare: %v", err)
	}
	g.App = a
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, func(addr string) { ready <- addr }) }()
	select {
	case addr := <-ready:
		g.URL = "http://" + addr
		g.cancel, g.done = cancel, done
	case err := <-done:
		cancel()
		g.t.Fatalf("testkit: the gateway stopped while starting: %v", err)
	case <-time.After(startTimeout):
		cancel()
		g.t.Fatalf("testkit: the gateway did not listen within %s", startTimeout)
	}
}

// Stop shuts the gateway down gracefully, as a signal would: in-flight
// requests finish, billing is flushed and the store closed. It fails the
// test if Serve reports an error. Stopping twice is harmless.
func (g *Gateway) Stop() {
	g.t.Helper()
	if err := g.stop(); err != nil {
		g.t.Fatalf("testkit: %v", err)
	}
}

// Restart stops the gateway and starts a new one over the same database
// file and configuration, as a process restart would; URL changes.
func (g *Gateway) Restart() {
	g.t.Helper()
	g.Stop()
	g.serve()
}

// Log is what the gateway has logged so far, across restarts.
func (g *Gateway) Log() string { return g.log.String() }

func (g *Gateway) stop() error {
	if g.cancel == nil {
		return nil
	}
	g.cancel()
	err := <-g.done
	g.cancel, g.done = nil, nil
	if err != nil {
		return fmt.Errorf("the gateway's Serve returned %w", err)
	}
	return nil
}

// cleanup stops a gateway the test left running and, when the test failed,
// shows the gateway's log next to the failure.
func (g *Gateway) cleanup() {
	if err := g.stop(); err != nil {
		g.t.Errorf("testkit: %v", err)
	}
	if g.t.Failed() {
		g.t.Logf("gateway log:\n%s", g.log.Tail(logDumpMax))
	}
}
