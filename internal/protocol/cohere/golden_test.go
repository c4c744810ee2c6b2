package cohere

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/golden"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// IR requests as the client formats decode them (a system prompt, several
// turns, tools and their results, images) encode to the golden v2 body.
func TestRequestGoldens(t *testing.T) {
	for _, in := range golden.Fixtures(t, "requests", ".ir.json") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, _ := os.ReadFile(in)
			var req ir.Request
			if err := json.Unmarshal(raw, &req); err != nil {
				t.Fatal(err)
			}
			out, err := V2.EncodeRequest(&req)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden.Compare(t, strings.TrimSuffix(in, ".ir.json")+".out.json", golden.Indent(t, out))
		})
	}
}

// v2 answers decode to the golden IR response.
func TestResponseGoldens(t *testing.T) {
	for _, in := range golden.Fixtures(t, "responses", ".json", ".ir.json") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			body, _ := os.ReadFile(in)
			resp, err := V2.DecodeResponse(body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden.Compare(t, golden.Path(in, ".ir.json"), golden.JSON(t, resp))
		})
	}
}

// decodeSSE runs a whole SSE text through a fresh stream decoder.
func decodeSSE(t *testing.T, raw []byte) ([]ir.Event, error) {
	t.Helper()
	dec := V2.NewStreamDecoder()
	var evs []ir.Event
	emit := func(ev ir.Event) error { evs = append(evs, ev); return nil }
	r := sse.NewReader(bytes.NewReader(raw), 0)
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if err := dec.Decode(string(ev.Name), ev.Data, emit); err != nil {
			return evs, err
		}
	}
	return evs, dec.Finish(emit)
}

// v2 streams (named SSE events, or data alone whose "type" names the
// event) decode to the golden IR events.
func TestStreamGoldens(t *testing.T) {
	for _, in := range golden.Fixtures(t, "streams", ".sse") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, _ := os.ReadFile(in)
			evs, err := decodeSSE(t, raw)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden.Compare(t, golden.Path(in, ".events.json"), golden.JSON(t, evs))
		})
	}
}
