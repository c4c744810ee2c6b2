// Package app is the composition root: it builds every service from the
// configuration, wires them into one HTTP server, and starts and stops them
// in order. It is the only package that knows which store is in use.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/turnpike-gw/turnpike/internal/kv"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/admin"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/batch"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/clientaddr"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
	"github.com/turnpike-gw/turnpike/internal/guardfetch"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/mcpgw"
	"github.com/turnpike-gw/turnpike/internal/notify"
	"github.com/turnpike-gw/turnpike/internal/obs"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/relay"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/task"
	"github.com/turnpike-gw/turnpike/internal/task/taskhttp"
	"github.com/turnpike-gw/turnpike/internal/web"
)

// Version is the gateway's version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// App is a running gateway.
type App struct {
	Config   config.Config
	Log      *slog.Logger
	Store    store.Store
	Billing  *billing.Service
	Writer   *billing.Writer
	Keys     *auth.Keys
	Sessions *auth.Sessions
	Router   *routing.Router
	Relay    *relay.Relay
	Admin    *admin.API
	// Limits is traffic control; Notify sends alerts.
	Limits *ratelimit.Service
	// Plans are the subscription plans users hold (CONTRACT §18).
	Plans   *plans.Service
	Notify  *notify.Notifier
	Handler http.Handler
	// mux holds the fixed routes, for RoutePattern.
	mux *http.ServeMux
	// Tracer exports traces when OTEL_EXPORTER_OTLP_ENDPOINT is set; nil
	// otherwise.
	Tracer *obs.Tracer

	sql     *sqlstore.Store
	schema  int // the database's schema version after migrating
	plugins *plugin.Registry
	// guardrails is the live guardrail set (CONTRACT §21).
	guardrails *guardrail.Engine
	// content is content logging (CONTRACT §20).
	content   *contentlog.Service
	tasks     *task.Service
	taskHTTP  *taskhttp.Handlers
	batches   *batch.Service
	mcp       *mcpgw.Gateway
	registry  *prometheus.Registry
	redis     kv.Client
	changes   *kv.Changes
	adminDeps admin.Deps
	// catalogues fetches price catalogues under the content guard.
	catalogues *guardfetch.Fetcher
	// loops are the background loops while the node serves (runners.go).
	loops *running
}

// New builds a gateway from cfg. It opens the store, migrates it, creates
// the root user on first start and applies the seed section.
func New(ctx context.Context, cfg config.Config, logOut io.Writer) (*App, error) {
	a := &App{Config: cfg, Log: newLogger(cfg.LogLevel, logOut)}
	for _, w := range cfg.Warnings() {
		a.Log.Warn(w)
	}
	if a.Config.CryptoSecret == "" {
		a.Config.CryptoSecret = randomHex(32)
		a.Config.GeneratedSecret = true
		a.Log.Warn("CRYPTO_SECRET is not set: using a random one; sessions and artifact links end with this process")
	}
	st, err := sqlstore.OpenStore(ctx, cfg.Database)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	a.Store, a.sql = st, st
	for _, m := range st.Applied() {
		a.Log.Info("applied migration", "version", m.Version, "name", m.Name)
	}
	if a.schema, err = st.SchemaVersion(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	if a.Tracer, err = obs.NewTracer(ctx, Version); err != nil {
		st.Close()
		return nil, fmt.Errorf("tracing: %w", err)
	}
	balances, err := a.balances(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	a.buildServices(balances)
	if err := a.reload(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if err := a.plugins.Load(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("load task plugins: %w", err)
	}
	if err := a.guardrails.Reload(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("load guardrails: %w", err)
	}
	a.buildHandler()
	return a, nil
}

// balances picks where live quota balances are kept: in this process for a
// single node, in Redis when several nodes share the database.
func (a *App) balances(ctx context.Context) (billing.Balances, error) {
	if a.Config.Redis == "" {
		return billing.NewMemoryBalances(a.Store), nil
	}
	rdb, where, err := kv.Open(a.Config.Redis)
	if err != nil {
		return nil, err
	}
	a.redis = rdb
	if err := kv.Ping(ctx, rdb, where); err != nil {
		rdb.Close()
		a.redis = nil
		return nil, err
	}
	return billing.NewRedisBalances(a.redis, a.Store), nil
}

func (a *App) buildServices(balances billing.Balances) {
	cfg := a.Config
	a.registry = prometheus.NewRegistry()
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// A batch is what 100 ms brings. The size cap only bounds one
	// transaction; it sits above what a tick brings at 10,000 calls a second
	// (two items a call) because on SQLite a call costs less in a larger
	// flush (BenchmarkBillingWriteCalls), and a smaller cap would split each
	// tick into several.
	a.Writer = billing.NewWriter(a.Store, a.Log, 100*time.Millisecond, 4096)
	// A call's reserve waits up to pairWindow for its end, so a call that
	// lasts less is stored as one ledger entry without a hold row: half the
	// writer's work, where most streamed calls outlast one 100 ms tick.
	a.Writer.SetPairWindow(pairWindow)
	a.Billing = billing.NewService(balances, a.Writer, cfg.QuotaPerUSD)
	w := a.Writer
	a.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "turnpike_idempotency_conflicts_total",
		Help: "Ledger entries whose fresh idempotency key was found already recorded (each one logged at error level)."},
		func() float64 { return float64(w.Conflicts()) }))
	a.Keys = auth.NewKeys(a.Store, 10*time.Second)
	if cfg.Demo {
		a.Keys.AllowDemoKey()
	}
	a.Sessions = auth.NewSessions(a.Store.Sessions(), a.Config.CryptoSecret, 7*24*time.Hour)
	a.Router = routing.NewRouter(routing.NewHealth(a.sql.Health(), a.Log))
	if a.redis != nil {
		// Cache affinity pins are shared, so a session's next turn finds
		// its key whichever node it reaches.
		a.Router.Pins = routing.NewRedisPins(a.redis, billing.RedisKeyPrefix(a.redis))
	}
	a.registry.MustRegister(channelStates{a.Router})
	a.buildTraffic()
	a.buildMCP()
	a.plugins = plugin.NewRegistry(plugin.Options{Store: a.Store, Logger: a.Log})
	a.guardrails = a.newGuardrails()
	a.content = a.newContent()
	a.catalogues = guardfetch.New(newUpstreamClient(), a.Config.AllowPrivateContent)
	a.adminDeps = admin.Deps{
		Store: a.Store, Billing: a.Billing, Keys: a.Keys, Sessions: a.Sessions, Router: a.Router,
		Throttle:  auth.NewLoginThrottle(a.failureCounter(), auth.DefaultThrottleLimits),
		RootToken: cfg.RootToken, Version: Version, Logger: a.Log, Reload: a.reload,
		TestChannel: a.testChannel, UpstreamModels: a.upstreamModels, Metrics: promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{}),
		MetricsAdminOnly: !cfg.MetricsPublic, Secure: strings.HasPrefix(a.Config.Address(), "https://"),
		PluginBaseURL: func(key string) string { return a.plugins.Current().DefaultBaseURL(key) },
		TypeClaimed:   func(t int) bool { return a.plugins.Current().ClaimsType(t) },
		Limits:        a.Limits, Plans: a.Plans, Notify: a.Notify, SeedMarks: a.sql.Traffic(),
		Accounts: a.accountDeps(), Payments: a.paymentDeps(), Demo: cfg.Demo, FetchCatalogue: a.fetchCatalogue,
		MCPReload:  a.reloadMCP,
		Guardrails: a.guardrailDeps(),
		Content:    a.content,
	}
	a.Admin = admin.New(a.adminDeps)
	a.changes = kv.NewChanges(a.redis, a.Billing.Node(), a.Log, a.applyChanges)
	a.buildTasks()
	a.buildRelay()
	a.buildBatches()
	a.wireHealth()
}

// failureCounter counts failed sign-ins where every node sees them: in
// Redis when nodes share one, else in this process.
func (a *App) failureCounter() auth.Counter {
	if a.redis != nil {
		return auth.NewRedisCounter(a.redis)
	}
	return auth.NewMemoryCounter()
}

// buildTraffic makes traffic control (its counts in Redis when several
// nodes share them) and the alerts it feeds.
func (a *App) buildTraffic() {
	a.Limits = ratelimit.New(a.sql.Traffic(), a.redis, a.Log)
	a.Limits.JournalAs(a.Billing.Node())
	a.Limits.CountLateWith(a.Billing)
	a.Notify = notify.New(a.Store, a.sql.Traffic(), a.Log)
	a.Limits.OnBudget(a.Notify.Budget)
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "turnpike_ratelimited_total",
		Help: "Calls refused by a rate limit or budget, by scope (token, user, model, budget)."}, []string{"scope"})
	a.registry.MustRegister(refused)
	a.Limits.OnRefuse(func(scope string) { refused.WithLabelValues(scope).Inc() })
	// Plans are admitted beside the limits, by the same gate.
	a.buildPlans()
}

// The task host protocol serves the standard endpoints for plugin-claimed
// models.
var _ relay.HostProtocols = (*taskhttp.Handlers)(nil)

// publicAddress is TaskPublicAddress, falling back to ServerAddress.
func (a *App) publicAddress() string {
	if a.Config.TaskPublicAddress != "" {
		return strings.TrimRight(a.Config.TaskPublicAddress, "/")
	}
	return a.Config.Address()
}

// reload rebuilds the routing and price snapshots from the database.
func (a *App) reload(ctx context.Context) error {
	chs, err := a.Store.Channels().All(ctx)
	if err != nil {
		return fmt.Errorf("load channels: %w", err)
	}
	a.Router.Swap(routing.NewTable(chs))
	if err := a.Billing.Reload(ctx, a.Store); err != nil {
		return fmt.Errorf("load prices: %w", err)
	}
	if err := a.Limits.Reload(ctx); err != nil {
		return fmt.Errorf("load traffic limits: %w", err)
	}
	if err := a.Plans.Reload(ctx); err != nil {
		return fmt.Errorf("load plans: %w", err)
	}
	if err := a.content.Reload(ctx, a.Store.Groups()); err != nil {
		return fmt.Errorf("load content logging: %w", err)
	}
	return a.reloadMCP(ctx)
}

func (a *App) buildHandler() {
	mux := http.NewServeMux()
	a.Admin.Register(mux)
	a.Relay.Register(mux)
	a.taskHTTP.Register(mux)
	a.batches.Register(mux)
	a.mcp.Register(mux)
	a.batches.RegisterConsole(mux, a.Admin.SessionOrRoot)
	plugin.NewAdminAPI(plugin.AdminDeps{Registry: a.plugins, RootToken: a.Config.RootToken,
		Sessions: a.Admin.SessionPrincipal, Logger: a.Log, HTTPClient: newUpstreamClient()}).Register(mux)
	mux.Handle("/", fallback(a.taskHTTP, web.Handler()))
	a.mux = mux
	audit := &accounts.Auditor{Store: a.adminDeps.Accounts.Store, Principal: a.Admin.SessionOrRoot, Log: a.Log}
	// Validate refused a bad entry; a configuration that skipped it trusts
	// no proxy, the safe side.
	proxies, _ := clientaddr.Parse(a.Config.TrustedProxies)
	a.Handler = proxies.Wrap(accept(a.Log, a.Tracer, storeGuard(apiStoreTimeout, audit.Wrap(browserGuard(a.Log, a.Config.Address(), a.Config.RootToken, announce(a.changes, mux))))))
}

// Prepare creates the root user and applies the seed; it returns the
// generated root password, if one was made up.
func (a *App) Prepare(ctx context.Context) (string, error) {
	deps := a.adminDeps
	created, generated, err := admin.EnsureRoot(ctx, deps, a.Config.RootPassword)
	if err != nil {
		return "", err
	}
	if !created {
		generated = ""
	}
	// The generated root password is returned even when a later step
	// fails: it is stored only as a hash, so a caller that did not show it
	// now would lock root out.
	if err := a.seed(ctx); err != nil {
		return generated, err
	}
	a.warnSecretless(ctx)
	return generated, nil
}

func (a *App) seed(ctx context.Context) error {
	// Nodes started together seed one after the other; conflicts on
	// natural keys are tolerated too, for databases without a lock.
	unlock, err := a.sql.SeedLock(ctx)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer unlock()
	// Plugins first, so that task_plugin channels of the seed can take
	// their plugin's default address.
	for _, p := range a.Config.Plugins {
		if _, err := a.plugins.InstallFile(ctx, p.Path); err != nil {
			return fmt.Errorf("seed plugin %s: %w", p.Path, err)
		}
	}
	deps := a.adminDeps
	deps.FreshDatabase = a.freshDatabase()
	if err := admin.Seed(ctx, deps, a.Config.Seed); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if err := a.Notify.Init(ctx, a.Config.Notify); err != nil {
		return fmt.Errorf("seed notify: %w", err)
	}
	// Nodes already running see what this file changed at once.
	a.changes.Publish("seed")
	return a.reload(ctx)
}

// PluginRevision is the database revision of the plugin generation this
// node serves; it moves when a plugin is installed, activated or removed
// on any node.
func (a *App) PluginRevision() string { return a.plugins.Current().Revision }

// applyChanges makes this node see a change another node announced: the
// key cache is dropped and every snapshot is read again.
func (a *App) applyChanges(ctx context.Context) {
	a.Keys.Invalidate()
	if err := a.reload(ctx); err != nil && ctx.Err() == nil {
		a.Log.Warn("reload after a change on another node failed; the periodic refresh retries", "err", err)
	}
	if err := a.plugins.Refresh(ctx); err != nil && ctx.Err() == nil {
		a.Log.Warn("task plugin refresh after a change on another node failed", "err", err)
	}
	// An empty section applies nothing and re-reads the alert settings.
	if err := a.Notify.Init(ctx, config.Notify{}); err != nil && ctx.Err() == nil {
		a.Log.Warn("alert settings reload after a change on another node failed", "err", err)
	}
}

// Serve listens and serves until ctx ends, then shuts down gracefully:
// in-flight requests finish (bounded), billing is flushed, the store closed.
func (a *App) Serve(ctx context.Context, ready func(addr string)) error {
	ln, err := net.Listen("tcp", a.Config.Listen)
	if err != nil {
		return err
	}
	// The lease comes before the first request: a hold whose owner has no
	// lease counts as abandoned to every other node's sweep.
	if err := a.Billing.TakeLease(ctx, a.Config.LeasePeriod()); err != nil {
		ln.Close()
		_ = a.shutdown()
		return fmt.Errorf("billing lease: %w", err)
	}
	if err := a.agreeOnRedis(ctx); err != nil {
		ln.Close()
		a.refuseStart(ctx)
		_ = a.shutdown()
		return err
	}
	a.loops = startRunners(a.Log, a.runners())
	calls := &inFlight{}
	srv := newServer(calls.wrap(a.Handler), bodyReadTimeout(a.Config.BodyLimit()), a.Log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	releaseStartupPages(a.Log)
	select {
	case err := <-errc:
		_ = a.shutdown()
		return err
	case <-ctx.Done():
	}
	a.drainCalls(srv, calls)
	// Upgraded realtime sockets are not tracked by the server: close them
	// and bill their last usage before the billing writer stops.
	shCtx, cancel := context.WithTimeout(context.Background(), endStreamsTimeout)
	defer cancel()
	if err := a.Relay.Drain(shCtx); err != nil {
		a.Log.Warn("realtime sessions or background responses did not end in time", "err", err)
	}
	billingErr := a.shutdown()
	a.Log.Info("stopped", "at", time.Now().UTC().Format(time.RFC3339))
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return billingErr
}

// billingCloseTimeout bounds the final billing flush: with the database
// away, shutdown logs what it could not write and ends instead of hanging.
const billingCloseTimeout = 15 * time.Second

// pairWindow is how long a call's reserve waits for its end before it is
// stored on its own (see billing.Writer.SetPairWindow). Most chat calls,
// streamed or not, end within it; a longer wait would keep more calls out
// of the hold table, where an operator sees what is in flight.
const pairWindow = 2 * time.Second

// shutdown stops the background work, flushes billing (bounded) and closes
// the store. It returns the writer's error when items stayed unwritten.
func (a *App) shutdown() error {
	if a.loops != nil {
		a.loops.stop()
	}
	a.plugins.Close()
	a.mcp.Close()
	ctx, cancel := context.WithTimeout(context.Background(), billingCloseTimeout)
	defer cancel()
	err := a.Writer.Close(ctx)
	if err == nil && a.loops != nil {
		// Everything is written, so no hold of this node is still wanted:
		// ending the lease now lets other nodes release stragglers (an
		// unclosed realtime session) without waiting for it to run out.
		if lerr := a.Billing.TakeLease(ctx, -time.Second); lerr != nil {
			a.Log.Warn("billing lease not ended", "err", lerr)
		}
	}
	a.Store.Close()
	if terr := a.Tracer.Shutdown(ctx); terr != nil {
		a.Log.Warn("traces not flushed", "err", terr)
	}
	if a.redis != nil {
		a.redis.Close()
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// RoutePattern is the pattern of the fixed route that serves r ("" when
// only the fallback does): the routes really served, which the API
// document is checked against.
func (a *App) RoutePattern(r *http.Request) string {
	_, pattern := a.mux.Handler(r)
	if pattern == "/" {
		return ""
	}
	return pattern
}
