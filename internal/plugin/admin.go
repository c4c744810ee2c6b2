package plugin

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// AdminDeps is what the plugin administration API works with.
type AdminDeps struct {
	Registry *Registry
	// RootToken, when set, is accepted as a Bearer token with root rights.
	RootToken string
	// Sessions resolves a console session into its user (admin.API's
	// SessionPrincipal); nil accepts the root token only.
	Sessions func(r *http.Request) (*auth.Principal, bool)
	Logger   *slog.Logger
	// HTTPClient fetches marketplace indexes and files; nil uses a default.
	HTTPClient *http.Client
}

// AdminAPI serves /api/plugin/task (CONTRACT §7). Every route needs root,
// and every call is audited.
type AdminAPI struct {
	d      AdminDeps
	reg    *Registry
	market *Marketplace
	log    *slog.Logger
}

// NewAdminAPI returns the API; Register mounts it.
func NewAdminAPI(d AdminDeps) *AdminAPI {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &AdminAPI{d: d, reg: d.Registry, market: NewMarketplace(d.Registry, d.HTTPClient), log: log.With("component", "task_plugin_admin")}
}

// call is one administrative request: who made it and what it touched, for
// the audit row written after it.
type call struct {
	actor   string
	action  string
	key     string
	version string
	detail  string
}

type adminHandler func(w http.ResponseWriter, r *http.Request, c *call) error

// Register mounts every route on mux.
func (a *AdminAPI) Register(mux *http.ServeMux) {
	routes := []struct {
		pattern, action string
		h               adminHandler
	}{
		{"POST /api/plugin/task", "upload", a.upload},
		{"GET /api/plugin/task", "list", a.list},
		{"POST /api/plugin/task/dry-run", "dry_run", a.dryRun},
		{"GET /api/plugin/task/runtime/status", "runtime_status", a.runtimeStatus},
		{"GET /api/plugin/task/marketplace", "marketplace_catalogue", a.catalogue},
		{"GET /api/plugin/task/marketplace/sources", "marketplace_sources", a.listSources},
		{"POST /api/plugin/task/marketplace/sources", "marketplace_source_add", a.addSource},
		{"DELETE /api/plugin/task/marketplace/sources", "marketplace_source_delete", a.deleteSource},
		{"POST /api/plugin/task/marketplace/install", "marketplace_install", a.install},
		{"GET /api/plugin/task/{key}", "detail", a.detail},
		{"GET /api/plugin/task/{key}/source", "source", a.source},
		{"POST /api/plugin/task/{key}/activate", "activate", a.activate},
		{"POST /api/plugin/task/{key}/status", "status", a.setStatus},
		{"DELETE /api/plugin/task/{key}", "delete", a.deletePlugin},
		{"DELETE /api/plugin/task/{key}/versions/{version}", "delete_version", a.deleteVersion},
	}
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, a.wrap(rt.action, rt.h))
	}
}

// wrap authenticates root, runs h, renders its error and writes the audit
// row and log line (never with request bodies, which may hold secrets).
func (a *AdminAPI) wrap(action string, h adminHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		c := &call{action: action, key: r.PathValue("key"), version: r.PathValue("version")}
		p, denied := a.authorize(r)
		var err error
		if denied != nil {
			err = denied
			c.actor = "anonymous"
			if p != nil {
				c.actor = p.Username
			}
		} else {
			c.actor = actorName(r, p, a.d.RootToken)
			err = h(w, r, c)
		}
		outcome := "ok"
		if err != nil {
			e := a.render(w, r, err)
			outcome = e.Code
		}
		a.audit(r, c, outcome, time.Since(start))
	}
}

func (a *AdminAPI) authorize(r *http.Request) (*auth.Principal, *Error) {
	if a.d.RootToken != "" {
		if tok := auth.BearerToken(r); tok != "" && auth.Equal(tok, a.d.RootToken) {
			return &auth.Principal{Username: store.RoleRoot, Role: store.RoleRoot}, nil
		}
	}
	if a.d.Sessions != nil {
		if p, ok := a.d.Sessions(r); ok {
			if p.Role != store.RoleRoot {
				return p, errorf(http.StatusForbidden, "forbidden", "task plugin administration needs the root role")
			}
			return p, nil
		}
	}
	return nil, errorf(http.StatusUnauthorized, "unauthorized", "sign in as root, or send the root token as a Bearer token")
}

func actorName(r *http.Request, p *auth.Principal, rootToken string) string {
	if p.UserID == 0 && rootToken != "" && auth.BearerToken(r) != "" {
		return "root-token"
	}
	return p.Username
}

func (a *AdminAPI) audit(r *http.Request, c *call, outcome string, took time.Duration) {
	e := AuditEntry{Actor: c.actor, Action: c.action, Key: c.key, Version: c.version, Outcome: outcome, Detail: c.detail}
	if err := a.reg.db.audit(r.Context(), e); err != nil {
		a.log.Error("task plugin audit row not written", "err", err)
	}
	a.log.Info("task plugin admin", "actor", c.actor, "action", c.action, "key", c.key, "version", c.version,
		"outcome", outcome, "detail", c.detail, "took_ms", took.Milliseconds())
}

// render writes err and returns it as an *Error. Unknown errors become a
// 500 whose cause stays in the log.
func (a *AdminAPI) render(w http.ResponseWriter, r *http.Request, err error) *Error {
	var e *Error
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &e):
	case errors.As(err, &tooBig):
		e = errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is larger than %d bytes", tooBig.Limit)
	case errors.Is(err, store.ErrNotFound):
		e = errorf(http.StatusNotFound, "not_found", "not found")
	default:
		a.log.Error("task plugin admin request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		e = errorf(http.StatusInternalServerError, "internal_error", "the request could not be completed; see the server log")
	}
	d := apijson.Detail{Code: e.Code, Message: e.Message}
	if len(e.Problems) > 0 {
		d.Problems = e.Problems
	}
	apijson.WriteError(w, e.Status, d)
	return e
}
