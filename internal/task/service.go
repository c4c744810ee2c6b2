package task

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Generations is what the task pipeline reads of the plugin registry: the
// generation live now. A registry that can also load stored, inactive
// versions implements VersionLoader.
type Generations interface {
	Current() *plugin.Generation
}

// VersionLoader is an optional ability of Generations: loading a stored
// plugin version the current generation does not hold, so a task keeps
// being polled by the version that produced it.
type VersionLoader interface {
	LoadVersion(ctx context.Context, key, version string) (*plugin.Loaded, error)
}

// Options are the task settings of CONTRACT §2.
type Options struct {
	// PollInterval is TASK_POLL_INTERVAL_SECONDS; default 15 s.
	PollInterval time.Duration
	// MaxFailures is TASK_POLL_MAX_FAILURES; default 20.
	MaxFailures int
	// Timeout is TASK_TIMEOUT_MINUTES, the outer deadline; default 24 h.
	Timeout time.Duration
	// RetryCount is how many further channels a submit may try; default 2.
	RetryCount int
	// PublicAddress is TaskPublicAddress (or ServerAddress) for links.
	PublicAddress string
	// UpstreamTimeout bounds one upstream exchange; default 60 s.
	UpstreamTimeout time.Duration
	// SubmitStreamIdle is how long an SSE submit answer may stay silent
	// before the submit fails; default 30 s.
	SubmitStreamIdle time.Duration
	// Node names this process in leases; default host name plus random.
	Node string
	// BatchSize is how many due tasks one poll round takes; default 100.
	BatchSize int
	// MaxFileBytes caps each inlined or uploaded file and their total
	// (MAX_FILE_DOWNLOAD_MB); default 64 MiB.
	MaxFileBytes int64
	// Secret signs artifact addresses (CRYPTO_SECRET): the same on every
	// node, and rotating it invalidates issued addresses.
	Secret string
	// AllowPrivateContent lets credentialless content requests reach
	// loopback, private and link-local addresses (allow_private_content).
	AllowPrivateContent bool
}

// Deps is what the task pipeline works with.
type Deps struct {
	Store       store.Store
	Billing     *billing.Service
	Router      *routing.Router
	Generations Generations
	Client      *http.Client
	Logger      *slog.Logger
	Options     Options
	// Limits is traffic control (rate limits and period budgets); nil
	// admits every submission.
	Limits *ratelimit.Service
	// Guardrails check each submission's prompt (nil: none).
	Guardrails Guardrails
}

// Service is the task pipeline: submission, the task records, the poller and
// the artifacts of finished tasks. Its HTTP surface is internal/task/taskhttp.
type Service struct {
	d      Deps
	opts   Options
	store  *Store
	log    *slog.Logger
	client *http.Client
	poller *Poller
}

// New builds the service. It starts nothing; run Poller().Run in a
// goroutine.
func New(d Deps) *Service {
	o := d.Options
	if o.PollInterval <= 0 {
		o.PollInterval = 15 * time.Second
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 24 * time.Hour
	}
	if o.RetryCount < 0 {
		o.RetryCount = 0
	}
	if o.UpstreamTimeout <= 0 {
		o.UpstreamTimeout = 60 * time.Second
	}
	if o.SubmitStreamIdle <= 0 {
		o.SubmitStreamIdle = 30 * time.Second
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 100
	}
	if o.Node == "" {
		o.Node = nodeName()
	}
	if o.Secret == "" {
		// Without a configured secret, artifact addresses still work on
		// this process until it restarts (CONTRACT: random per start).
		o.Secret = randomSecret()
	}
	// Submits, queries and token exchanges never follow a redirect (it could
	// leave the host policy); content fetches set their own per-hop check.
	var tasks store.TaskRepo
	if d.Store != nil { // tests of pure helpers build a service without a store
		tasks = d.Store.Tasks()
	}
	s := &Service{d: d, opts: o, store: NewStore(tasks), log: d.Logger, client: upstream.NoRedirects(d.Client)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.poller = &Poller{s: s}
	return s
}

// Store returns the task store.
func (s *Service) Store() *Store { return s.store }

// Poller returns the background poller.
func (s *Service) Poller() *Poller { return s.poller }

func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func nodeName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}

// Generation is the plugin generation live now; nil before the first load.
func (s *Service) Generation() *plugin.Generation { return s.d.Generations.Current() }

// PluginFor finds the plugin version that should drive a stored task: the
// producer version while it can still be loaded, else the active one.
func (s *Service) PluginFor(ctx context.Context, t *Task) (*plugin.Loaded, bool) {
	gen := s.d.Generations.Current()
	if gen == nil {
		return nil, false
	}
	if l, ok := gen.Version(t.PluginKey, t.PluginVersion); ok {
		return l, true
	}
	if vl, ok := s.d.Generations.(VersionLoader); ok {
		if l, err := vl.LoadVersion(ctx, t.PluginKey, t.PluginVersion); err == nil && l != nil {
			return l, true
		}
	}
	if l, ok := gen.Plugin(t.PluginKey); ok {
		return l, true
	}
	return nil, false
}
