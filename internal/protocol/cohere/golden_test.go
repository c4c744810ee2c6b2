package cohere

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol/golden"
)

// IR requests as the client formats decode them (a system prompt, several
// turns, tools and their results, images) encode to the golden v2 body.
func TestRequestGoldens(t *testing.T) {
	golden.EncodeRequests(t, "requests", V2.EncodeRequest)
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

// v2 streams (named SSE events, or data alone whose "type" names the
// event) decode to the golden IR events.
func TestStreamGoldens(t *testing.T) {
	for _, in := range golden.Fixtures(t, "streams", ".sse") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, _ := os.ReadFile(in)
			evs, err := golden.DecodeSSE(raw, V2.NewStreamDecoder())
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden.Compare(t, golden.Path(in, ".events.json"), golden.JSON(t, evs))
		})
	}
}
