package openai

import (
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// ChatCodec implements protocol.Codec for Chat Completions. It holds no state,
// so the zero value is ready and one value serves every request.
type ChatCodec struct{}

// Chat is the Chat Completions codec.
var Chat = ChatCodec{}

var _ protocol.Codec = ChatCodec{}

// Format reports protocol.OpenAI.
func (ChatCodec) Format() protocol.Format { return protocol.OpenAI }

// DecodeRequest parses a client's chat completion request.
func (ChatCodec) DecodeRequest(body []byte) (*ir.Request, error) { return decodeRequest(body) }

// EncodeRequest builds an upstream chat completion request.
func (ChatCodec) EncodeRequest(req *ir.Request) ([]byte, error) { return encodeRequest(req) }

// DecodeResponse parses an upstream chat.completion body.
func (ChatCodec) DecodeResponse(body []byte) (*ir.Response, error) { return decodeResponse(body) }

// EncodeResponse renders a chat.completion body for the client.
func (ChatCodec) EncodeResponse(resp *ir.Response) ([]byte, error) { return encodeResponse(resp) }

// NewStreamDecoder returns a decoder for one upstream chunk stream.
func (ChatCodec) NewStreamDecoder() protocol.StreamDecoder { return newChatStreamDecoder() }

// NewStreamEncoder returns an encoder that ends the stream with a usage
// chunk only when the client asked for one, as the OpenAI API behaves.
func (ChatCodec) NewStreamEncoder(sink protocol.EventSink, opts protocol.StreamOptions) protocol.StreamEncoder {
	return NewChatStreamEncoderWith(sink, ChatStreamOptions{IncludeUsage: opts.IncludeUsage})
}

// EncodeError renders e as {"error":{"message","type","param","code"}}.
func (ChatCodec) EncodeError(e *ir.Error) []byte { return encodeError(e) }

// DecodeError reads an upstream error answer.
func (ChatCodec) DecodeError(status int, body []byte) *ir.Error { return decodeError(status, body) }

// SniffUsage reads the usage object of a chat.completion body.
func (ChatCodec) SniffUsage(body []byte) (ir.Usage, bool) { return sniffUsage(body) }

// SniffStreamUsage reads the usage object of one chunk, if it has one.
func (ChatCodec) SniffStreamUsage(_ string, data []byte) (ir.Usage, bool) { return sniffUsage(data) }
