package taskhttp

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// Options are the HTTP settings of the task host protocol (CONTRACT §2).
type Options struct {
	// BodyLimit caps inbound request bodies; default 32 MiB.
	BodyLimit int64
	// ProtocolTimeout bounds in-request waits of host protocols
	// (TASK_PLUGIN_PROTOCOL_TIMEOUT_SECONDS); default 600 s.
	ProtocolTimeout time.Duration
}

// Deps is what the handlers work with.
type Deps struct {
	// Core is the task service the handlers submit to and read from.
	Core *task.Service
	// Keys authenticates API keys on every route but /api/tasks.
	Keys   *auth.Keys
	Logger *slog.Logger
	// RootToken authenticates /api/tasks when APIPrincipal is not set.
	RootToken string
	// APIPrincipal authenticates /api/tasks like the admin API (root token
	// or console session). Sessions are checked against the store, which
	// only the admin API does, so without it only the root token works.
	// It answers nil for an anonymous caller and an error when the
	// session could not be checked (the database does not answer).
	APIPrincipal func(r *http.Request) (*auth.Principal, error)
	Options      Options
}

// Handlers serve the host protocol over HTTP.
type Handlers struct {
	d    Deps
	core *task.Service
	opts Options
	log  *slog.Logger
}

// New builds the handlers; mount them with Register, NativeHandler or
// ServeNative, and hand them to the relay as its host protocols.
func New(d Deps) *Handlers {
	o := d.Options
	if o.BodyLimit <= 0 {
		o.BodyLimit = 32 << 20
	}
	if o.ProtocolTimeout <= 0 {
		o.ProtocolTimeout = 600 * time.Second
	}
	h := &Handlers{d: d, core: d.Core, opts: o, log: d.Logger}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}
