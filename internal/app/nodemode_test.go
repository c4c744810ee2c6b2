package app_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// serveErr starts a second node from cfg and reports why it did not
// serve; nil means it served (and was stopped again).
func serveErr(t *testing.T, cfg config.Config) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, cfg, io.Discard)
	if err != nil {
		return err
	}
	if _, err := a.Prepare(ctx); err != nil {
		_ = a.Writer.Close(ctx)
		a.Store.Close()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, func(string) { cancel() }) }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the second node neither served nor refused")
		return nil
	}
}

// Nodes on one PostgreSQL database must all keep balances in Redis or all
// not (issue 24: a node without Redis let users overspend).
func TestANodeRefusesToStartInAnotherRedisModeThanTheLiveNodes(t *testing.T) {
	pg, rd := os.Getenv("TURNPIKE_TEST_POSTGRES"), os.Getenv("TURNPIKE_TEST_REDIS")
	if pg == "" || rd == "" {
		t.Skip("set TURNPIKE_TEST_POSTGRES and TURNPIKE_TEST_REDIS to start nodes in both modes on one database")
	}
	cases := []struct {
		name        string
		firstRedis  bool
		secondRedis bool
		refusal     string // "" when the second node starts
	}{
		{"without Redis beside a node with Redis", true, false, "keep balances in Redis and this node has none: set TURNPIKE_REDIS"},
		{"with Redis beside a node without", false, true, "run without Redis and this node has TURNPIKE_REDIS set"},
		{"with Redis beside a node with Redis", true, true, ""},
		{"without Redis beside a node without", false, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, redisURL := testdb.Postgres(t, pg), freshRedis(t, rd)
			mode := func(redis bool) testkit.Option {
				return testkit.WithConfig(func(cfg *config.Config) {
					cfg.Database, cfg.Redis = db, ""
					if redis {
						cfg.Redis = redisURL
					}
				})
			}
			first := testkit.Start(t, mode(c.firstRedis))
			cfg := first.App.Config
			cfg.Redis = ""
			if c.secondRedis {
				cfg.Redis = redisURL
			}
			err := serveErr(t, cfg)
			switch {
			case c.refusal == "" && err != nil:
				t.Fatalf("the second node refused: %v", err)
			case c.refusal != "" && (err == nil || !strings.Contains(err.Error(), c.refusal)):
				t.Fatalf("the second node: %v, want a refusal saying %q", err, c.refusal)
			}
			if c.refusal == "" {
				return
			}
			// Once the first node has stopped, the second one starts.
			first.Stop()
			if err := serveErr(t, cfg); err != nil {
				t.Fatalf("after the first node stopped, the second still refused: %v", err)
			}
		})
	}
}
