package bedrock

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
)

type discard struct{}

func (discard) Event(string, []byte) error { return nil }

// Any answer body decodes or fails with an *ir.Error, and what decodes
// re-encodes for a client.
func FuzzDecodeResponse(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "responses", "*.json"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := Converse.DecodeResponse(body)
		if err != nil {
			if _, ok := err.(*ir.Error); !ok {
				t.Fatalf("non-IR error %v", err)
			}
			return
		}
		if resp.Usage.InputTokens < 0 || resp.Usage.OutputTokens < 0 {
			t.Fatalf("negative usage %+v", resp.Usage)
		}
		if _, err := anthropic.Messages.EncodeResponse(resp); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

// Lines of "name<TAB>payload" decode without panicking, and whatever the
// decoder emits a client encoder accepts.
func FuzzStreamDecoder(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.events"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		dec := Converse.NewStreamDecoder()
		enc := anthropic.Messages.NewStreamEncoder(discard{}, protocol.StreamOptions{})
		emit := func(ev ir.Event) error { return enc.Encode(ev) }
		for _, line := range bytes.Split(input, []byte("\n")) {
			name, data, _ := bytes.Cut(line, []byte("\t"))
			if err := dec.Decode(string(name), data, emit); err != nil {
				return
			}
		}
		_ = dec.Finish(emit)
	})
}
