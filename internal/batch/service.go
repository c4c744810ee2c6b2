// Package batch serves files and batches: the OpenAI Files and Batch APIs
// and the messages-native Message Batches. It keeps the bytes of uploaded
// files itself, validates and reserves a batch up front, and runs it —
// through the relay's one driver line by line, or as a provider batch —
// on a durable record, so a restart loses nothing and bills once.
package batch

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Options are the service's tunables from the start-up configuration.
type Options struct {
	// MaxFileBytes bounds one upload (files.max_mb).
	MaxFileBytes int64
	// BodyLimit bounds a JSON request body, a Message Batch's included
	// (request_body_limit_mb, as every other surface); 32 MB when unset.
	BodyLimit int64
	// PollInterval is how often the runner looks for work and polls
	// provider batches (TASK_POLL_INTERVAL_SECONDS).
	PollInterval time.Duration
	// Node names this process in batch leases.
	Node string
	// PublicAddress is where clients reach the gateway (results_url);
	// empty takes the origin of each request.
	PublicAddress string
	// DefaultCompletionTokens is reserved for a line that sets no limit.
	DefaultCompletionTokens int
}

// Deps are what the service drives.
type Deps struct {
	Files   store.FileRepo
	Batches store.BatchRepo
	// Holds lists the open holds, to refund a create's that no batch
	// names (orphans.go); nil skips that.
	Holds store.HoldRepo
	// Blobs keeps file bytes; nil keeps them in the database (Files).
	Blobs   Blobs
	Keys    *auth.Keys
	Billing *billing.Service
	Router  *routing.Router
	Limits  *ratelimit.Service
	// Plans are the subscription plans (nil: none).
	Plans *plans.Service
	// Lines runs one gateway-run line through the relay's driver.
	Lines LineRunner
	// Client reaches providers' files and batches APIs.
	Client *http.Client
	// Adapters finds a channel type's upstream adapter, whose Batches
	// capability speaks its provider's batch API; nil uses the built-in
	// adapters.
	Adapters func(channelType int) (upstream.Adapter, bool)
	// OpenAI and Messages render errors in their surfaces' dialects.
	OpenAI, Messages protocol.Codec
	Logger           *slog.Logger
	Options          Options
}

// Service serves files and batches.
type Service struct {
	Deps
	runner *runner
}

// New returns the service.
func New(d Deps) *Service {
	if d.Blobs == nil {
		d.Blobs = SQLBlobs{Repo: d.Files}
	}
	if d.Options.MaxFileBytes <= 0 {
		d.Options.MaxFileBytes = 200 << 20
	}
	if d.Options.BodyLimit <= 0 {
		d.Options.BodyLimit = 32 << 20
	}
	if d.Options.PollInterval <= 0 {
		d.Options.PollInterval = 15 * time.Second
	}
	if d.Options.DefaultCompletionTokens <= 0 {
		d.Options.DefaultCompletionTokens = 1024
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	s := &Service{Deps: d}
	s.runner = newRunner(s)
	return s
}

// Register mounts the files and batches surfaces.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/files", s.uploadFile)
	mux.HandleFunc("GET /v1/files", s.listFiles)
	mux.HandleFunc("GET /v1/files/{id}", s.getFile)
	mux.HandleFunc("GET /v1/files/{id}/content", s.fileContent)
	mux.HandleFunc("DELETE /v1/files/{id}", s.deleteFile)
	mux.HandleFunc("POST /v1/batches", s.createBatch)
	mux.HandleFunc("GET /v1/batches", s.listBatches)
	mux.HandleFunc("GET /v1/batches/{id}", s.getBatch)
	mux.HandleFunc("POST /v1/batches/{id}/cancel", s.cancelBatch)
	s.registerMessages(mux)
}

// Run drives batches until ctx ends: it runs gateway lines, polls
// provider batches and settles finished ones, on any node.
func (s *Service) Run(ctx context.Context) { s.runner.run(ctx) }

// Tick does one round of the runner's work (tests drive it directly).
func (s *Service) Tick(ctx context.Context) { s.runner.tick(ctx) }

// Wait waits until the batches this process started running stopped.
func (s *Service) Wait() { s.runner.wg.Wait() }

// bearer authenticates an OpenAI-style call, answering the error itself.
func (s *Service) bearer(w http.ResponseWriter, r *http.Request) (*auth.Principal, bool) {
	p, err := s.Keys.Authenticate(r.Context(), auth.BearerToken(r))
	if err != nil {
		s.fail(w, err)
		return nil, false
	}
	return p, true
}

// fail answers err in the OpenAI dialect.
func (s *Service) fail(w http.ResponseWriter, err error) { writeErr(w, s.OpenAI, err) }

func writeErr(w http.ResponseWriter, codec protocol.Codec, err error) {
	e := ir.As(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(codec.EncodeError(e))
}

func notFound(what, id string) *ir.Error {
	return &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "not_found", Message: "no " + what + " with id " + id}
}

func badRequest(code, param, msg string) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: code, Param: param, Message: msg}
}

// context0 is r's context without its cancellation: giving money back
// must not stop because the client left.
func context0(r *http.Request) context.Context { return context.WithoutCancel(r.Context()) }

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newID is prefix followed by 24 random letters and digits.
func newID(prefix string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return prefix + string(b)
}

// codecOf renders errors in the dialect of b's lines.
func (s *Service) codecOf(b *store.Batch) protocol.Codec {
	if b.Kind == kindMessages {
		return s.Messages
	}
	return s.OpenAI
}
