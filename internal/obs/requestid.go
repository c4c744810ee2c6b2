// Package obs is the gateway's observability leaf: request ids carried in
// the context, a slog handler that stamps them on every line logged for a
// request, and OpenTelemetry tracing that costs nothing when it is off.
package obs

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
)

// HeaderRequestID is the header a request id travels in, both ways.
const HeaderRequestID = "X-Request-Id"

// MaxRequestIDLen is the longest client-supplied request id kept.
const MaxRequestIDLen = 128

type requestIDKey struct{}

// NewRequestID returns a globally unique id: a UUIDv7 (time-ordered, 74
// random bits), so ids made on different nodes never collide and sort by
// time in logs and indexes.
func NewRequestID() string {
	// uuid.NewV7 fails only when crypto/rand does, which since Go 1.24
	// crashes the process rather than returning an error.
	return uuid.Must(uuid.NewV7()).String()
}

// ValidRequestID reports whether a client-sent request id is kept as is:
// one to MaxRequestIDLen printable ASCII characters (space included, but
// not only spaces). Anything else is replaced by a generated id, so a
// request id can never inject control characters into logs or headers.
func ValidRequestID(s string) bool {
	if len(s) == 0 || len(s) > MaxRequestIDLen {
		return false
	}
	blank := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		if c != ' ' {
			blank = false
		}
	}
	return !blank
}

// RequestIDFrom returns the client's id when it is valid, else a new one.
func RequestIDFrom(sent string) string {
	if ValidRequestID(sent) {
		return sent
	}
	return NewRequestID()
}

// WithRequestID returns ctx carrying id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// WithRequestIDAt returns ctx carrying the id at *id, which must not change
// afterwards. A pointer into a struct already on the heap goes into the
// context as it is; a string is copied to the heap to fit in an interface,
// an allocation on every request.
func WithRequestIDAt(ctx context.Context, id *string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	switch id := ctx.Value(requestIDKey{}).(type) {
	case string:
		return id
	case *string:
		return *id
	}
	return ""
}

// ContextHandler wraps a slog.Handler so that every record logged with a
// request's context (Logger.InfoContext and kin) carries its request_id,
// and its trace_id when the request is traced.
type ContextHandler struct{ slog.Handler }

// NewContextHandler wraps h.
func NewContextHandler(h slog.Handler) *ContextHandler { return &ContextHandler{h} }

// Handle adds the context's request and trace ids.
func (h *ContextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if tid := traceID(ctx); tid != "" {
		r.AddAttrs(slog.String("trace_id", tid))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the wrapper around the derived handler.
func (h *ContextHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &ContextHandler{h.Handler.WithAttrs(as)}
}

// WithGroup keeps the wrapper around the derived handler.
func (h *ContextHandler) WithGroup(name string) slog.Handler {
	return &ContextHandler{h.Handler.WithGroup(name)}
}
