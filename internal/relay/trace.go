package relay

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/obs"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Tracing of upstream attempts, after the OpenTelemetry GenAI conventions.
// Only called when the relay has a tracer: with tracing off the call core
// does not reach this file.

// startAttemptSpan starts the client span of an attempt on ch and gives the
// attempt a request whose context carries it, so that exchange sends its
// traceparent upstream. tryPlan ends it and puts the request back.
func (c *callCore) startAttemptSpan(ch *routing.Channel) {
	op := c.operation()
	if c.serverSpan == nil {
		c.serverSpan = trace.SpanFromContext(c.r.Context())
		c.serverSpan.SetAttributes(attribute.String(obs.AttrOperation, op), attribute.String(obs.AttrRequestModel, c.model))
	}
	ctx, span := c.rl.Tracer.StartClient(c.r.Context(), op+" "+c.model,
		attribute.String(obs.AttrOperation, op),
		attribute.String(obs.AttrRequestModel, c.model),
		attribute.String(obs.AttrResponseModel, ch.MapModel(c.model)),
		attribute.String(obs.AttrProvider, providerName(ch.Type)),
		attribute.Int64("turnpike.channel.id", ch.ID),
		attribute.String("turnpike.channel.name", ch.Name))
	c.span = span
	c.r = c.r.WithContext(ctx)
}

func endAttemptSpan(span trace.Span, rec attemptRecord) {
	span.SetAttributes(attribute.Int("http.response.status_code", rec.Status))
	if rec.ErrorCode != "" {
		span.SetAttributes(attribute.String("error.type", rec.ErrorCode))
		span.SetStatus(codes.Error, rec.ErrorCode)
	}
	span.End()
}

// traceUsage puts the settled usage on the attempt's span (settling happens
// inside the attempt that served) and on the server span.
func (c *callCore) traceUsage(u ir.Usage) {
	attrs := []attribute.KeyValue{attribute.Int(obs.AttrInputTokens, u.InputTokens), attribute.Int(obs.AttrOutputTokens, u.OutputTokens)}
	if c.span != nil {
		c.span.SetAttributes(attrs...)
	}
	if c.serverSpan != nil {
		if c.channel != nil {
			attrs = append(attrs, attribute.String(obs.AttrResponseModel, c.channel.MapModel(c.model)))
		}
		c.serverSpan.SetAttributes(attrs...)
	}
}

// operation is gen_ai.operation.name for the call's surface.
func (c *callCore) operation() string {
	switch c.name {
	case string(protocol.OpenAI), string(protocol.Anthropic), string(protocol.Gemini), "responses", "realtime":
		return "chat"
	case "completions":
		return "text_completion"
	}
	return c.name
}

// providerName is gen_ai.provider.name for a channel type.
func providerName(t int) string {
	if n, ok := providerNames[t]; ok {
		return n
	}
	return upstream.TypeName(t)
}

// providerNames are the semantic conventions' names where they differ
// from the channel type's.
var providerNames = map[int]string{
	upstream.TypeGemini: "gcp.gemini", upstream.TypeVertex: "gcp.vertex_ai", upstream.TypeAWS: "aws.bedrock",
	upstream.TypeAzure: "azure.ai.openai", upstream.TypeMistral: "mistral_ai", upstream.TypeXAI: "x_ai",
}
