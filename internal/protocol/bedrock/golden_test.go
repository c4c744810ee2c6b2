package bedrock

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/golden"
)

// IR requests, shaped as the client formats' decoders make them, encode to
// the golden Converse bodies: system blocks, alternating turns with tool
// results leading the user turn, images and documents inline or from S3,
// tool specs and choice, clamped sampling, and an Anthropic model's
// thinking through additionalModelRequestFields.
func TestEncodeRequestGoldens(t *testing.T) {
	golden.EncodeRequests(t, "requests", Converse.EncodeRequest)
}

// Converse answers decode to the golden IR: text, tool calls with JSON
// string arguments, reasoning (signed and redacted), the stop reason, and
// usage with the cache tokens inside the input count.
func TestDecodeResponseGoldens(t *testing.T) {
	for _, in := range golden.Fixtures(t, "responses", ".json") {
		if strings.HasSuffix(in, ".ir.json") {
			continue
		}
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, _ := os.ReadFile(in)
			resp, err := Converse.DecodeResponse(raw)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden.Compare(t, strings.TrimSuffix(in, ".json")+".ir.json", golden.JSON(t, resp))
		})
	}
}

// decodeEvents runs "name<TAB>payload" lines through a fresh decoder.
func decodeEvents(raw []byte) ([]ir.Event, error) {
	dec := Converse.NewStreamDecoder()
	var evs []ir.Event
	emit := func(ev ir.Event) error { evs = append(evs, ev); return nil }
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		name, data, _ := bytes.Cut(line, []byte("\t"))
		if err := dec.Decode(string(name), data, emit); err != nil {
			return evs, err
		}
	}
	return evs, dec.Finish(emit)
}

// ConverseStream event sequences decode to the golden IR events: blocks
// opened by their first delta or by a tool-use start, the stop before the
// usage, Done at the end.
func TestStreamGoldens(t *testing.T) {
	for _, in := range golden.Fixtures(t, "streams", ".events") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, _ := os.ReadFile(in)
			evs, err := decodeEvents(raw)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden.Compare(t, strings.TrimSuffix(in, ".events")+".ir.json", golden.JSON(t, evs))
		})
	}
}
