package responses

import (
	"bytes"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// Codec is the Responses API as the relay serves it. It holds no state.
type Codec struct{ EventStream }

// API is the Responses API codec value the gateway wires into the relay.
var API = Codec{}

var (
	_ protocol.ResponsesAPI         = Codec{}
	_ protocol.ResponsesConversion  = (*Request)(nil)
	_ protocol.FailingStreamEncoder = (*StreamEncoder)(nil)
)

// DecodeRequest converts a request for a chat channel (see DecodeRequest).
func (Codec) DecodeRequest(body []byte) (protocol.ResponsesConversion, error) {
	req, err := DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// SniffUsage reads the usage of a Response object relayed untouched.
func (Codec) SniffUsage(body []byte) (ir.Usage, bool) { return SniffUsage(body) }

// ResponseID reads the id of a Response object or of a stream event's
// response.
func (Codec) ResponseID(data []byte) string { return ResponseIDOf(data) }

var responseCreated = []byte(`response.created`)

// CreatedEvent reports response.created; it comes once, and the byte check
// keeps the other events from being parsed.
func (Codec) CreatedEvent(name string, data []byte) bool {
	return bytes.Contains(data, responseCreated) && EventType(name, data) == "response.created"
}

// DroppedTools names the hosted tools left out of the converted request.
func (r *Request) DroppedTools() []string {
	if r.Tools == nil {
		return nil
	}
	return r.Tools.Dropped
}

// Call is the request in IR.
func (r *Request) Call() *ir.Request { return r.IR }

// EncodeResponse renders a chat answer as the Response object for this
// request.
func (r *Request) EncodeResponse(res *ir.Response, model string) ([]byte, error) {
	return EncodeResponse(res, Meta{Model: model, Echo: r.Echo, Tools: r.Tools})
}

// NewStreamEncoder returns the Responses event stream encoder for this
// request.
func (r *Request) NewStreamEncoder(sink protocol.EventSink, model string) protocol.FailingStreamEncoder {
	return NewStreamEncoder(sink, Meta{Model: model, Echo: r.Echo, Tools: r.Tools})
}
