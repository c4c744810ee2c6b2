package bedrock

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/turnpike-gw/turnpike/internal/ir"
	converse "github.com/turnpike-gw/turnpike/internal/protocol/bedrock"
	"github.com/turnpike-gw/turnpike/internal/upstream/bedrock/bedrocktest"
)

// Any bytes an upstream sends as a ConverseStream body, read as AWS
// event-stream frames and decoded into IR, end in events, io.EOF or an
// error, never a panic or a runaway allocation; a clean end only comes
// between frames.
func FuzzEventStreamToIR(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("..", "..", "protocol", "bedrock", "testdata", "streams", "*.events"))
	enc := eventstream.NewEncoder()
	for _, n := range names {
		raw, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var buf bytes.Buffer
		for _, line := range bytes.Split(raw, []byte("\n")) {
			name, data, ok := bytes.Cut(line, []byte("\t"))
			if ok {
				_ = enc.Encode(&buf, bedrocktest.Frame(bedrocktest.Event{Type: string(name), Payload: string(data)}))
			}
		}
		f.Add(buf.Bytes())
	}
	var exc bytes.Buffer
	_ = enc.Encode(&exc, bedrocktest.Frame(bedrocktest.Event{Type: "internalServerException", Payload: `{"message":"x"}`, Exception: true}))
	f.Add(exc.Bytes())
	f.Fuzz(func(t *testing.T, body []byte) {
		r := NewEventReader(bytes.NewReader(body))
		dec := converse.Converse.NewStreamDecoder()
		emit := func(ir.Event) error { return nil }
		for i := 0; ; i++ {
			if i > len(body)/frameOverhead {
				t.Fatal("more events than the bytes can hold")
			}
			name, data, err := r.NextEvent()
			if errors.Is(err, io.EOF) {
				_ = dec.Finish(emit)
				return
			}
			if err != nil {
				return
			}
			if err := dec.Decode(string(name), data, emit); err != nil {
				return
			}
		}
	})
}
