package obs

import (
	"context"
	"net/http"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracer exports OpenTelemetry traces over OTLP/HTTP. A nil *Tracer is
// tracing switched off: every method is then a nil check and nothing else,
// so the hot path pays nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset.
type Tracer struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// TracingConfigured reports whether the environment asks for traces.
func TracingConfigured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewTracer starts the OTLP/HTTP exporter when the environment configures
// one (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// with the exporter's other standard OTEL_* variables), and returns nil
// otherwise.
func NewTracer(ctx context.Context, version string) (*Tracer, error) {
	if !TracingConfigured() {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", serviceName()), attribute.String("service.version", version)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)), sdktrace.WithResource(res))
	return &Tracer{tp: tp, tracer: tp.Tracer("github.com/turnpike-gw/turnpike"),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}, nil
}

func serviceName() string {
	if n := os.Getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	return "turnpike"
}

// On reports whether tracing is on.
func (t *Tracer) On() bool { return t != nil }

// Shutdown flushes the spans still queued and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// StartServer starts the server span of an inbound request, continuing the
// client's trace when it sent a traceparent.
func (t *Tracer) StartServer(r *http.Request) (context.Context, trace.Span) {
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
}

// EndServer names the span after the route that served it and ends it with
// the answer's status.
func EndServer(span trace.Span, route string, status int, requestID string) {
	if route != "" {
		span.SetName(route)
		span.SetAttributes(attribute.String("http.route", route))
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status), attribute.String("turnpike.request_id", requestID))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// StartClient starts a client span (one upstream attempt) under ctx.
func (t *Tracer) StartClient(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// Inject writes the W3C traceparent (and baggage) of ctx's span into h, for
// an outbound request. It does nothing when tracing is off.
func (t *Tracer) Inject(ctx context.Context, h http.Header) {
	if t == nil {
		return
	}
	t.prop.Inject(ctx, propagation.HeaderCarrier(h))
}

// traceID is the trace id of ctx's span, if it is recorded.
func traceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// GenAI attribute names of the OpenTelemetry semantic conventions.
const (
	AttrOperation     = "gen_ai.operation.name"
	AttrRequestModel  = "gen_ai.request.model"
	AttrResponseModel = "gen_ai.response.model"
	AttrProvider      = "gen_ai.provider.name"
	AttrInputTokens   = "gen_ai.usage.input_tokens"
	AttrOutputTokens  = "gen_ai.usage.output_tokens"
)

// Client returns c with a transport that sends the W3C traceparent of each
// request's context (the span it runs under, if any), for outbound calls
// that are not attempts of the relay (task plugins). With tracing off it
// returns c unchanged.
func (t *Tracer) Client(c *http.Client) *http.Client {
	if t == nil {
		return c
	}
	out := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = injecting{base: base, t: t}
	return &out
}

type injecting struct {
	base http.RoundTripper
	t    *Tracer
}

func (i injecting) RoundTrip(r *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(r.Context()).IsValid() {
		return i.base.RoundTrip(r)
	}
	// A RoundTripper must not change the caller's request.
	r = r.Clone(r.Context())
	i.t.Inject(r.Context(), r.Header)
	return i.base.RoundTrip(r)
}
