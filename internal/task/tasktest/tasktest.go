// Package tasktest is the gateway a task service runs in, for the tests of
// the task core and of its HTTP surface: a SQLite store, the billing
// ledger, the router, API keys and the testdata plugins. It builds neither
// the task service nor its handlers, so the core's own tests can use it.
package tasktest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// VendorKey is the key of every channel Channel adds; the fake vendors
// refuse any other.
const VendorKey = "vendor-secret-key-xyz"

// LoadPlugin compiles and validates a plugin of internal/task/testdata,
// named by its path there. The directory stays where the app and e2e tests
// read pertask.js too.
func LoadPlugin(t testing.TB, name string) *plugin.Loaded {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "internal", "task", "testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := plugin.LoadSource(name, string(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Pool.Close)
	return l
}

// Generations serves one fixed plugin generation.
type Generations struct {
	gen atomic.Pointer[plugin.Generation]
}

// NewGenerations serves a first generation of the plugins.
func NewGenerations(plugins []*plugin.Loaded) *Generations {
	g := &Generations{}
	g.gen.Store(plugin.NewGeneration(1, "r1", plugins, nil))
	return g
}

// Current is the generation being served.
func (g *Generations) Current() *plugin.Generation { return g.gen.Load() }

// World is the gateway around a task service, on one database file.
type World struct {
	t       testing.TB
	Store   *sqlstore.Store
	Writer  *billing.Writer
	Billing *billing.Service
	Router  *routing.Router
	Keys    *auth.Keys
	Log     *slog.Logger
}

// Open builds every component on the database file, as a process start does.
func Open(t testing.TB, dbPath string) *World {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, "sqlite:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	w := &World{t: t, Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w.Writer = billing.NewWriter(st, w.Log, 5*time.Millisecond, 256)
	w.Billing = billing.NewService(billing.NewMemoryBalances(st), w.Writer, 500000)
	if err := w.Billing.Reload(ctx, st); err != nil {
		t.Fatal(err)
	}
	w.Router = routing.NewRouter(routing.NewHealth(nil, nil))
	w.Keys = auth.NewKeys(st, time.Minute)
	w.ReloadChannels()
	return w
}

// Close flushes billing and closes the store, as a graceful shutdown does.
func (w *World) Close() {
	_ = w.Writer.Close(context.Background())
	w.Store.Close()
}

// User adds an enabled user in the default group with quota and one API
// key, and returns its id.
func (w *World) User(name, key string, quota int64) int64 {
	ctx := context.Background()
	u := &store.User{Username: name, Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := w.Store.Users().Create(ctx, u); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.Billing.Credit(ctx, billing.Credit{UserID: u.ID, Delta: quota, Note: "test"}); err != nil {
		w.t.Fatal(err)
	}
	tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: auth.HashKey(key), KeyMasked: auth.MaskKey(key), Quota: -1, Status: store.StatusEnabled}
	if err := w.Store.Tokens().Create(ctx, tok); err != nil {
		w.t.Fatal(err)
	}
	w.Flush()
	return u.ID
}

// Price stores a model price and reloads the price snapshot.
func (w *World) Price(p store.ModelPrice) {
	ctx := context.Background()
	if err := w.Store.Prices().Upsert(ctx, p); err != nil {
		w.t.Fatal(err)
	}
	if err := w.Billing.Reload(ctx, w.Store); err != nil {
		w.t.Fatal(err)
	}
}

// ReloadChannels swaps in a routing table of the stored channels.
func (w *World) ReloadChannels() {
	all, err := w.Store.Channels().All(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	w.Router.Swap(routing.NewTable(all))
}

// Channel adds a type 61 channel binding pluginKey at baseURL.
func (w *World) Channel(name, pluginKey, baseURL string, models []string, mod func(*store.Channel)) *store.Channel {
	c := &store.Channel{Name: name, Type: plugin.ChannelTypeTaskPlugin, BaseURL: baseURL, Key: VendorKey, Models: models,
		Groups: []string{"default"}, Weight: 1, Status: store.StatusEnabled, Settings: map[string]any{"task_plugin_key": pluginKey}}
	if mod != nil {
		mod(c)
	}
	if err := w.Store.Channels().Create(context.Background(), c); err != nil {
		w.t.Fatal(err)
	}
	w.ReloadChannels()
	return c
}

// Flush writes the billing ledger's pending rows.
func (w *World) Flush() {
	if err := w.Writer.Flush(context.Background()); err != nil {
		w.t.Fatal(err)
	}
}

// Quota is a user's stored balance after flushing the ledger.
func (w *World) Quota(userID int64) int64 {
	w.Flush()
	u, err := w.Store.Users().Get(context.Background(), userID)
	if err != nil {
		w.t.Fatal(err)
	}
	return u.Quota
}

// Logs lists the usage-log rows of a type for a user, oldest first.
func (w *World) Logs(userID int64, typ string) []store.UsageLog {
	w.Flush()
	ls, _, err := w.Store.Logs().List(context.Background(), store.LogFilter{UserID: userID, Type: typ}, store.Page{Page: 1, PageSize: 100})
	if err != nil {
		w.t.Fatal(err)
	}
	for i, j := 0, len(ls)-1; i < j; i, j = i+1, j-1 {
		ls[i], ls[j] = ls[j], ls[i]
	}
	return ls
}

// moduleRoot is the directory of go.mod above the test's working directory
// (go test runs a test in its package's directory). It is found from there,
// not from this file's compiled-in path, because CI builds with -trimpath,
// which leaves no directory in that path.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}
