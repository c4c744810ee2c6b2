// Package relay serves the model surfaces. Every call runs the same named
// stages — accept, authenticate, decode, admit, plan, attempt, relay,
// settle, record — whatever wire format it arrived in; the format-specific
// work is delegated to protocol codecs and upstream adapters.
package relay

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
	"github.com/turnpike-gw/turnpike/internal/obs"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Options are the relay's tunables from the start-up configuration.
type Options struct {
	RetryCount       int
	BodyLimit        int64
	FirstByteTimeout time.Duration
	UpstreamTimeout  time.Duration
	// DefaultCompletionTokens is reserved for the answer when the client
	// sets no max_tokens.
	DefaultCompletionTokens int
	// ModerationDefaultModel is used by /v1/moderations when the request
	// names no model (config moderation_default_model).
	ModerationDefaultModel string
	// MultipartMemory is how many bytes of a multipart upload are held in
	// memory before the rest is spooled to temp files (default 8 MiB).
	MultipartMemory int64
	// BackgroundPoll is the first interval at which a background response's
	// channel is asked whether it finished (default 2 s, doubling to 30 s).
	BackgroundPoll time.Duration
}

// Deps are the services the relay drives.
type Deps struct {
	Keys    *auth.Keys
	Billing *billing.Service
	Router  *routing.Router
	Client  *http.Client
	// H2CClient carries the calls of channels with settings.http2
	// prior_knowledge; nil derives one from Go's default transport.
	H2CClient *http.Client
	Codecs    map[protocol.Format]protocol.Codec
	// Adapters finds the upstream adapter of a channel type
	// (providers.For); nil knows the built-in ones (upstream.Builtin).
	Adapters func(channelType int) (upstream.Adapter, bool)
	Logger   *slog.Logger
	Metrics  *Metrics
	Options  Options
	// Session resolves the console session for the playground surface.
	Session func(r *http.Request) (*auth.Principal, bool)
	// Hosts lets task plugins serve the standard endpoints for the models
	// they claim; nil when no plugin host is wired.
	Hosts HostProtocols
	// Limits is traffic control (rate limits and period budgets); nil
	// admits every call.
	Limits *ratelimit.Service
	// Plans are the subscription plans (nil: none).
	Plans *plans.Service
	// OnSettle, when set, hears every charged call (balance alerts).
	OnSettle func(userID, tokenID int64)
	// Responses remembers which channel stored a response, for
	// GET /v1/responses/{id}; nil disables retrieval through channels.
	Responses ResponseIndex
	// Embedder is the alternate-native embedding wire (embedContent,
	// batchEmbedContents): its clients' calls, and alternate-native
	// channels serving /v1/embeddings.
	Embedder protocol.Embedder
	// Completions reads the legacy /v1/completions stream as it passes.
	Completions protocol.StreamPassthrough
	// TokenCounter is the alternate-native :countTokens wire.
	TokenCounter protocol.TokenCounter
	// ResponsesAPI is the Responses API wire of /v1/responses.
	ResponsesAPI protocol.ResponsesAPI
	// Tracer, when not nil, traces every upstream attempt as a client span
	// and sends its traceparent upstream.
	Tracer *obs.Tracer
	// Guardrails check chat requests and answers (CONTRACT §21); nil
	// checks nothing.
	Guardrails Guardrails
	// Cache is the response cache (CONTRACT §22), consulted only for the
	// models and keys that turn it on; nil disables it.
	Cache *respcache.Cache
	// Content keeps the request and answer of the calls whose key or
	// group turns content logging on (CONTRACT §20); nil keeps none.
	Content *contentlog.Service
}

// HostProtocols is what the relay needs from the task-plugin host: standard
// requests (/v1/responses, /v1/images/*) whose model a plugin claims are
// served by that plugin instead of an ordinary channel.
type HostProtocols interface {
	// ServeProtocol serves a request of a host protocol ("std_responses",
	// "std_image") for model. It returns false, having written nothing,
	// when no enabled plugin claims the model for that protocol. body is
	// the request body already read within the size limit.
	ServeProtocol(w http.ResponseWriter, r *http.Request, protocol, model string, body []byte) bool
	// ServeResponse serves GET /v1/responses/{id} for a response that a
	// plugin task produced; false, having written nothing, otherwise.
	ServeResponse(w http.ResponseWriter, r *http.Request, id string) bool
}

// Relay serves the model surfaces.
type Relay struct {
	Deps
	altActions map[string]AltAction
	sockets    rtRegistry
	background bgFollowers
	// pinWarned is when a cache affinity pin store failure was last
	// logged (unix nanoseconds), so an outage logs once in a while.
	pinWarned atomic.Int64
	// stopped ends every upstream exchange still open when the shutdown
	// grace is over (EndOpenCalls).
	stopped stopSignal
}

// Drain ends what outlives the HTTP server's own shutdown: live realtime
// sessions are closed and billed, background responses stop being followed
// (their holds stay open for the billing sweep). Call it before the billing
// writer is closed.
func (rl *Relay) Drain(ctx context.Context) error {
	if err := rl.CloseRealtime(ctx); err != nil {
		return err
	}
	return rl.closeBackground(ctx)
}

// New returns a relay.
func New(d Deps) *Relay {
	if d.Options.DefaultCompletionTokens <= 0 {
		d.Options.DefaultCompletionTokens = 1024
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics(nil)
	}
	d.Client = upstream.NoRedirects(d.Client)
	if d.H2CClient == nil {
		base, ok := http.DefaultTransport.(*http.Transport)
		if !ok {
			base = &http.Transport{}
		}
		d.H2CClient = &http.Client{Transport: upstream.H2CTransport(base)}
	}
	d.H2CClient = upstream.NoRedirects(d.H2CClient)
	if d.Adapters == nil {
		d.Adapters = upstream.Builtin
	}
	return &Relay{Deps: d, altActions: map[string]AltAction{}}
}

// Register mounts the chat surfaces on mux.
func (rl *Relay) Register(mux *http.ServeMux) {
	openai := rl.Codecs[protocol.OpenAI]
	mux.Handle("POST /v1/chat/completions", rl.chatHandler(surface{codec: openai, key: bearerKey}))
	mux.Handle("POST /pg/chat/completions", rl.chatHandler(surface{codec: openai, playground: true}))
	mux.HandleFunc("GET /pg/models", rl.playgroundModels)
	mux.Handle("POST /v1/messages", rl.messagesHandler())
	mux.HandleFunc("POST /v1/messages/count_tokens", rl.messagesCountTokens)
	mux.HandleFunc("POST /v1beta/models/{call}", rl.altInvoke)
	mux.HandleFunc("POST /v1/models/{call}", rl.altInvoke)
	mux.HandleFunc("GET /v1/models", rl.listModels)
	mux.HandleFunc("GET /v1/models/{model}", rl.getModel)
	mux.HandleFunc("GET /v1beta/models", rl.listAltModels)
	mux.HandleFunc("GET /v1beta/models/{model}", rl.getAltModel)
	mux.HandleFunc("GET /v1beta/openai/models", rl.listOpenAIModels)
	mux.HandleFunc("POST /api/pricing/estimate", rl.pricingEstimate)
	rl.registerEndpoints(mux)
	rl.registerResponses(mux)
}

// AltAction serves one extra alternate-native action for a model.
type AltAction func(w http.ResponseWriter, r *http.Request, model string)

// HandleAltAction adds an alternate-native action (embedContent, ...) served
// by another part of the gateway.
func (rl *Relay) HandleAltAction(name string, h AltAction) { rl.altActions[name] = h }

// surface is one inbound flavour of a chat call.
type surface struct {
	codec protocol.Codec
	// key extracts the API key; nil for session-authenticated surfaces.
	key        func(r *http.Request) string
	playground bool
	// model is the model named by the path (alternate-native), if any.
	model string
	// stream forces streaming (alternate-native streamGenerateContent).
	stream bool
	// jsonArrayStream frames stream events as a JSON array instead of SSE.
	jsonArrayStream bool
}

func bearerKey(r *http.Request) string { return auth.BearerToken(r) }
