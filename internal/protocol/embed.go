package protocol

import "github.com/turnpike-gw/turnpike/internal/ir"

// Embedder is a format's own embedding wire (the alternate-native
// embedContent and batchEmbedContents): for its clients' calls, which any
// embedding channel may serve, and for channels of the format serving
// another format's embedding calls.
type Embedder interface {
	// DecodeEmbedRequest reads a client's call, single (one content, one
	// vector) or a batch, into its texts and the vector size it asks for
	// (0: the model's own). Failures are *ir.Error 400s naming the field.
	DecodeEmbedRequest(body []byte, single bool) (texts []string, dims int, err error)
	// EncodeEmbedResponse renders vectors, in input order, as the answer to
	// a client's call (single: the first vector alone).
	EncodeEmbedResponse(vecs [][]float64, single bool) []byte
	// EmbedPassthrough is a client's own body as a channel of this format
	// should receive it: every model named inside set to model. raw is
	// never modified.
	EmbedPassthrough(raw []byte, model string) []byte
	// EncodeEmbedRequest builds a channel's batch body, one request per
	// text; dims > 0 asks for vectors of that size.
	EncodeEmbedRequest(model string, texts []string, dims int) []byte
	// DecodeEmbedResponse reads a channel's answer, batch or single, into
	// vectors.
	DecodeEmbedResponse(body []byte) ([][]float64, error)
}

// TokenCounter is a format's token-counting call (the alternate-native
// :countTokens), which the gateway answers itself with its tokenizer.
type TokenCounter interface {
	// DecodeCountTokens reads the call into the request whose prompt is
	// counted; failures are *ir.Error 400s naming the field.
	DecodeCountTokens(body []byte) (*ir.Request, error)
	// EncodeCountTokens renders the answer for total prompt tokens.
	EncodeCountTokens(total int) []byte
}
