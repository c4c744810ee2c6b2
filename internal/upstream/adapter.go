package upstream

import (
	"context"
	"io"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// Adapter is how the gateway reaches one kind of channel: the wire its chat
// calls speak and how a request is addressed and authenticated. Adapters
// never retry, bill or choose channels. Abilities only some providers have
// are the small interfaces below, found by type assertion.
type Adapter interface {
	// Codec is the wire of a chat call to t. It may depend on the model:
	// Vertex AI serves Gemini models on one wire and Claude on another.
	Codec(t Target) protocol.UpstreamCodec
	// Chat builds the request of a chat call whose body is already in
	// Codec(t)'s format. in carries the client's headers; an adapter copies
	// only protocol headers that must travel, never the client's key.
	Chat(ctx context.Context, t Target, body []byte, stream bool, in http.Header) (*http.Request, error)
}

// Endpoints is an adapter whose provider serves OpenAI-style endpoints
// beyond chat (/v1/embeddings, images, audio, completions, responses,
// rerank) with the OpenAI body.
type Endpoints interface {
	// Serves reports whether the provider has the OpenAI-style path.
	Serves(path string) bool
	// Endpoint builds a request for an OpenAI-style path such as
	// /v1/embeddings, with the channel's address layout and credentials.
	Endpoint(ctx context.Context, t Target, method, path string, body io.Reader, contentType string) (*http.Request, error)
}

// Framer is an adapter whose streams are not server-sent events.
type Framer interface {
	StreamEvents(body io.Reader) protocol.EventReader
}

// ErrorDecoder is an adapter that reads its provider's error answers
// itself, where headers carry the error's kind (Bedrock's
// x-amzn-ErrorType) or the body is not its chat wire's error shape.
type ErrorDecoder interface {
	DecodeError(status int, h http.Header, body []byte) *ir.Error
}

// Validator checks a channel's key and settings when the channel is
// saved; its error says what to fix and never repeats the key.
type Validator interface {
	Validate(t Target) error
}

// ModelLister asks the provider which models the channel's account can use.
type ModelLister interface {
	ListModels(ctx context.Context, t Target) ([]string, error)
}

// Embedder is an adapter whose provider has embeddings on its own wire
// rather than the OpenAI one.
type Embedder interface {
	EmbedRequest(ctx context.Context, t Target, texts []string, dims int) (*http.Request, error)
	// DecodeEmbeddings reads the answer: one vector per text in order, and
	// the usage the provider reported (zero when it reports none).
	DecodeEmbeddings(body []byte) ([][]float64, ir.Usage, error)
}

// TokenCounter is an adapter whose provider counts a messages-native
// request's input tokens (POST /v1/messages/count_tokens).
type TokenCounter interface {
	CountTokens(ctx context.Context, t Target, body []byte, in http.Header) (*http.Request, error)
}
