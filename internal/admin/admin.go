// Package admin serves the administration API under /api (users, API keys,
// channels, prices, groups, logs) and seeds the database from the YAML file.
package admin

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/users"
)

// Deps is what the administration API works with.
type Deps struct {
	// FreshDatabase is set when this start created the database, so no
	// older release can have seeded it (see seed_marks.go).
	FreshDatabase bool
	marks         markState

	Store    store.Store
	Billing  *billing.Service
	Keys     *auth.Keys
	Sessions *auth.Sessions
	// Throttle limits failed sign-ins; nil counts them in this process.
	Throttle  *auth.LoginThrottle
	Router    *routing.Router
	RootToken string
	Version   string
	Logger    *slog.Logger
	// Reload rebuilds routing and price snapshots after channels/prices/groups change.
	Reload func(ctx context.Context) error
	// TestChannel sends one small request through a channel (provided by the relay).
	TestChannel func(ctx context.Context, c *store.Channel) (latency time.Duration, err error)
	// UpstreamModels asks a channel's provider for its model list
	// (provided by the relay); nil answers 501.
	UpstreamModels func(ctx context.Context, c *store.Channel) ([]string, error)
	// FetchCatalogue reads a price catalogue's address under the content
	// guard (allow_private_content); nil refuses catalogue addresses.
	FetchCatalogue func(ctx context.Context, url string) ([]byte, error)
	// Metrics is served at GET /metrics; nil answers 404.
	Metrics http.Handler
	// MetricsAdminOnly requires an admin for /metrics (metrics_public: false).
	MetricsAdminOnly bool
	// Secure sets the Secure flag on cookies.
	Secure bool
	// Limits is traffic control (rate limits and budgets); nil hides the
	// limit fields' effect.
	Limits *ratelimit.Service
	// Plans are the subscription plans (CONTRACT §18).
	Plans *plans.Service
	// Notify reads and changes where alerts go (GET, PUT
	// /api/settings/notify); nil answers 404.
	Notify NotifySettings
	// PluginBaseURL returns a task plugin's default upstream address, used
	// for a task_plugin channel (type 61) saved without a base_url.
	PluginBaseURL func(pluginKey string) string
	// TypeClaimed reports a channel type an enabled task plugin claims, so
	// its channels are accepted without an adapter of the gateway's own;
	// nil claims none.
	TypeClaimed func(channelType int) bool
	// Accounts are registration, two-factor and OpenID Connect sign-in,
	// redemption codes and the audit log.
	Accounts AccountDeps
	// Payments are top-ups by card.
	Payments PaymentDeps
	// SeedMarks keeps which seed entries were applied (Seed); nil applies
	// every entry at every start.
	SeedMarks SeedMarks
	// Demo accepts the demo's published password (`turnpike demo` only).
	Demo bool
	// MCPReload makes the MCP gateway see a change to its servers or
	// grants; nil when there is none.
	MCPReload func(ctx context.Context) error
	// Guardrails are the live guardrail set and its plugin checks.
	Guardrails GuardrailDeps
	// Content reads the kept contents of logged calls (CONTRACT §20);
	// nil: every row's content reads as not found.
	Content *contentlog.Service
}

// NotifySettings is where alerts go, kept in the database.
type NotifySettings interface {
	Settings(ctx context.Context) (config.Notify, error)
	SetSettings(ctx context.Context, n config.Notify) error
}

// API is the administration API.
type API struct {
	d   Deps
	log *slog.Logger
	// roles is the role each registered route requires ("" for anyone),
	// which the OpenAPI document reports.
	roles   map[string]string
	docOnce sync.Once
	doc     []byte
	docErr  error
	users   *users.Service
}

// New returns the API; Register mounts it.
func New(d Deps) *API {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if d.Throttle == nil {
		d.Throttle = auth.NewLoginThrottle(auth.NewMemoryCounter(), auth.DefaultThrottleLimits)
	}
	return &API{d: d, log: log, roles: map[string]string{}, users: d.usersService()}
}

// usersService is the one way the API, the seed and root's first start
// create users and set passwords.
func (d Deps) usersService() *users.Service {
	s := &users.Service{Users: d.Store.Users(), Demo: d.Demo}
	if d.Billing != nil {
		s.Funds = d.Billing
	}
	return s
}

// invalid turns a users rule's refusal into the field error /api answers.
func invalid(err error) error {
	if iv, ok := errors.AsType[*users.Invalid](err); ok {
		return badField(iv.Field, "%s", iv.Message)
	}
	return err
}

// handlerFunc is a handler that returns its failure instead of writing it,
// so every error leaves in the same shape. p is nil for anonymous routes.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error

// Register mounts every route of the administration API on mux.
func (a *API) Register(mux *http.ServeMux) {
	a.route(mux, "GET /api/status", "", "status", a.status)
	a.route(mux, "GET /api/openapi.json", "", "document", a.openAPI)
	a.route(mux, "GET /healthz", "", "database", a.healthz)
	a.route(mux, "GET /metrics", "", "metrics", a.metrics)
	a.route(mux, "POST /api/auth/login", "", "user", a.login)
	a.route(mux, "POST /api/auth/logout", "", "session", a.logout)
	a.route(mux, "POST /api/auth/password", store.RoleUser, "user", a.changePassword)
	a.route(mux, "GET /api/auth/me", store.RoleUser, "user", a.me)

	a.routeUsers(mux)
	a.routeTokens(mux)
	a.routeChannels(mux)
	a.routePrices(mux)
	a.routeCatalogue(mux)
	a.routeGroups(mux)
	a.routeNotify(mux)
	a.routeReports(mux)
	a.route(mux, "GET /api/logs", store.RoleUser, "log", a.listLogs)
	a.route(mux, "GET /api/logs/export", store.RoleUser, "log", a.exportLogs)
	a.route(mux, "GET /api/logs/{id}", store.RoleUser, "log", a.getLog)
	a.route(mux, "GET /api/logs/{id}/content", store.RoleUser, "log", a.getLogContent)
	a.route(mux, "GET /api/ledger", store.RoleAdmin, "ledger entry", a.listLedger)
	a.routeAccounts(mux)
	a.routePayments(mux)
	a.routeMCP(mux)
	a.routeGuardrails(mux)
	a.routePlans(mux)
	a.routeTeams(mux)
}

// route mounts h behind authentication when role is set. what names the
// resource in not-found and conflict messages.
func (a *API) route(mux *http.ServeMux, pattern, role, what string, h handlerFunc) {
	a.roles[pattern] = role
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		var p *auth.Principal
		if role != "" {
			var err *apiError
			if p, err = a.authorize(r, role); err != nil {
				writeError(w, err)
				return
			}
		}
		if err := h(w, r, p); err != nil {
			e := classify(err, what)
			if e.Status >= 500 {
				a.log.ErrorContext(r.Context(), "admin API request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, e)
		}
	})
}

// authorize resolves the caller and checks it holds at least role. A
// session that cannot be checked because the database does not answer is
// a 503, not a 401: the caller is probably signed in.
func (a *API) authorize(r *http.Request, role string) (*auth.Principal, *apiError) {
	p, err := a.CheckSessionOrRoot(r)
	if err != nil {
		return nil, classify(err, "session")
	}
	if p == nil {
		return nil, errUnauthenticated
	}
	if !p.AtLeast(role) {
		return nil, forbidden("this needs the %s role", role)
	}
	return p, nil
}

// principal prefers the root token; a wrong bearer falls through to the
// cookie so a browser session still works behind a proxy that adds headers.
func (a *API) principal(r *http.Request) (*auth.Principal, bool) {
	if a.d.RootToken != "" {
		if tok := auth.BearerToken(r); tok != "" && auth.Equal(tok, a.d.RootToken) {
			return &auth.Principal{Username: store.RoleRoot, Role: store.RoleRoot}, true
		}
	}
	return a.SessionPrincipal(r)
}

// SessionOrRoot is how every /api surface authenticates: the root token,
// else the session cookie. Other packages serving /api paths use it.
func (a *API) SessionOrRoot(r *http.Request) (*auth.Principal, bool) { return a.principal(r) }

// CheckSessionOrRoot is SessionOrRoot telling an anonymous caller (nil)
// from a session the database could not check (an error), which the
// caller answers 503 rather than 401.
func (a *API) CheckSessionOrRoot(r *http.Request) (*auth.Principal, error) {
	if a.d.RootToken != "" {
		if tok := auth.BearerToken(r); tok != "" && auth.Equal(tok, a.d.RootToken) {
			return &auth.Principal{Username: store.RoleRoot, Role: store.RoleRoot}, nil
		}
	}
	p, _, err := a.checkSession(r)
	return p, err
}

// SessionPrincipal resolves the session cookie into its user, for other
// surfaces (the playground) that share the console's sign-in. Ended
// sessions and disabled or deleted users have none.
func (a *API) SessionPrincipal(r *http.Request) (*auth.Principal, bool) {
	p, _, ok := a.session(r)
	return p, ok
}

// session resolves the session cookie into its user and the session itself.
func (a *API) session(r *http.Request) (*auth.Principal, *auth.Session, bool) {
	p, s, err := a.checkSession(r)
	if err != nil {
		a.log.Warn("session check failed", "err", err)
	}
	return p, s, err == nil && p != nil
}

// checkSession is session telling "no valid session" (nil, no error) from
// "the database could not say" (an error).
func (a *API) checkSession(r *http.Request) (*auth.Principal, *auth.Session, error) {
	if a.d.Sessions == nil {
		return nil, nil, nil
	}
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil {
		return nil, nil, nil
	}
	s, err := a.d.Sessions.Resolve(r.Context(), c.Value)
	if errors.Is(err, auth.ErrNoSession) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	u, err := a.d.Store.Users().Get(r.Context(), s.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if u.Status != store.StatusEnabled {
		return nil, nil, nil
	}
	p := &auth.Principal{UserID: u.ID, Username: u.Username, Role: u.Role, Group: u.Group}
	if err := auth.WithTeam(r.Context(), a.d.Store, p, u); err != nil {
		return nil, nil, err
	}
	return p, s, nil
}

// reload makes routing and billing see a change to channels, prices or groups.
func (a *API) reload(ctx context.Context) error {
	if a.d.Reload != nil {
		return a.d.Reload(ctx)
	}
	return a.d.Billing.Reload(ctx, a.d.Store)
}

// flush makes ledger and log rows queued so far visible in the database.
func (a *API) flush(ctx context.Context) error {
	return a.d.Billing.Writer().Flush(ctx)
}
