package bedrock

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	converse "github.com/turnpike-gw/turnpike/internal/protocol/bedrock"
)

// Frame limits. A frame is a 12-byte prelude (total length, headers
// length, prelude CRC), headers, payload and a 4-byte CRC. Bedrock's
// frames are small; the cap keeps a broken or hostile upstream from making
// the gateway buffer a frame of gigabytes.
const (
	frameOverhead = 16
	maxFrame      = 16 << 20
)

// Event-stream message types (the :message-type header).
const (
	typeEvent     = "event"
	typeException = "exception"
	typeError     = "error"
)

// ErrBadFrame is an event-stream frame that cannot be read.
var ErrBadFrame = errors.New("malformed AWS event-stream frame")

// eventReader reads AWS event-stream frames one at a time: an event's
// :event-type is its name and its payload its data; an exception or error
// frame ends the stream with the upstream's error.
type eventReader struct {
	br      *bufio.Reader
	dec     *eventstream.Decoder
	payload []byte
	name    []byte
}

// NewEventReader reads the frames of body.
func NewEventReader(body io.Reader) protocol.EventReader {
	return &eventReader{br: bufio.NewReader(body), dec: eventstream.NewDecoder()}
}

// Buffered reports bytes read from the upstream and not yet returned.
func (r *eventReader) Buffered() int { return r.br.Buffered() }

// NextEvent returns the next event frame. Frames of other message types
// than event, exception and error are skipped. The checks before decoding
// stop the decoder from trusting a length that cannot be right.
func (r *eventReader) NextEvent() (name, data []byte, err error) {
	for {
		pre, err := r.br.Peek(8)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(pre) == 0 {
					return nil, nil, io.EOF
				}
				return nil, nil, fmt.Errorf("%w: the stream ended inside a frame", ErrBadFrame)
			}
			return nil, nil, err
		}
		total, headers := binary.BigEndian.Uint32(pre[0:4]), binary.BigEndian.Uint32(pre[4:8])
		if total < frameOverhead || total > maxFrame || headers > total-frameOverhead {
			return nil, nil, fmt.Errorf("%w: frame of %d bytes with %d bytes of headers", ErrBadFrame, total, headers)
		}
		msg, err := r.dec.Decode(r.br, r.payload[:0])
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, nil, fmt.Errorf("%w: the stream ended inside a frame", ErrBadFrame)
			}
			return nil, nil, fmt.Errorf("%w: %v", ErrBadFrame, err)
		}
		if cap(msg.Payload) <= 64<<10 {
			r.payload = msg.Payload
		}
		switch header(msg, ":message-type") {
		case typeEvent, "":
			et := header(msg, ":event-type")
			if et == "" {
				continue
			}
			r.name = append(r.name[:0], et...)
			return r.name, msg.Payload, nil
		case typeException:
			return nil, nil, converse.Exception(header(msg, ":exception-type"), msg.Payload)
		case typeError:
			payload, _ := json.Marshal(map[string]string{"message": header(msg, ":error-message")})
			return nil, nil, converse.Exception(header(msg, ":error-code"), payload)
		}
	}
}

// header is a string header's value, "" when absent or of another type.
func header(msg eventstream.Message, name string) string {
	if v, ok := msg.Headers.Get(name).(eventstream.StringValue); ok {
		return string(v)
	}
	return ""
}
