package gemini

import (
	"encoding/json"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// Requests in this format decode to the IR golden, and the IR re-encodes to
// the upstream golden (what another format's client would have produced).
func TestRequestGoldens(t *testing.T) {
	for _, f := range fixtures(t, "requests/*.json") {
		t.Run(f, func(t *testing.T) {
			req, err := Generate.DecodeRequest(readFile(t, f))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden(t, goldenPath(f, "ir.json"), indentJSON(t, req))
			out, err := Generate.EncodeRequest(req)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden(t, goldenPath(f, "gemini.json"), indentRaw(t, out))
		})
	}
}

// IR built the way the other formats' decoders build it encodes to the
// golden upstream body.
func TestEncodeRequestFromOtherFormats(t *testing.T) {
	for _, f := range fixtures(t, "encode/*.ir.json") {
		t.Run(f, func(t *testing.T) {
			var req ir.Request
			if err := json.Unmarshal(readFile(t, f), &req); err != nil {
				t.Fatal(err)
			}
			out, err := Generate.EncodeRequest(&req)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden(t, goldenPath(f, "gemini.json"), indentRaw(t, out))
		})
	}
}

func TestResponseGoldens(t *testing.T) {
	for _, f := range fixtures(t, "responses/*.json") {
		t.Run(f, func(t *testing.T) {
			resp, err := Generate.DecodeResponse(readFile(t, f))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden(t, goldenPath(f, "ir.json"), indentJSON(t, resp))
			out, err := Generate.EncodeResponse(resp)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden(t, goldenPath(f, "gemini.json"), indentRaw(t, out))
		})
	}
}

// Upstream stream chunks decode to the IR events golden; those events
// re-encode to the client chunks golden.
func TestStreamGoldens(t *testing.T) {
	for _, f := range fixtures(t, "streams/*.jsonl") {
		t.Run(f, func(t *testing.T) {
			evs, err := decodeStream(splitLines(readFile(t, f)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden(t, goldenPath(f, "events.json"), eventLines(t, evs))
			golden(t, goldenPath(f, "gemini.jsonl"), encodeEvents(t, evs))
		})
	}
}

// Event sequences shaped like the other formats' decoders produce (blocks
// left open, usage before stop, pings) encode to the golden client chunks.
func TestStreamEncodeFromOtherFormats(t *testing.T) {
	for _, f := range fixtures(t, "stream_encode/*.events.json") {
		t.Run(f, func(t *testing.T) {
			var raw []eventJSON
			if err := json.Unmarshal(readFile(t, f), &raw); err != nil {
				t.Fatal(err)
			}
			evs := make([]ir.Event, len(raw))
			for i, e := range raw {
				evs[i] = fromEventJSON(t, e)
			}
			golden(t, goldenPath(f, "gemini.jsonl"), encodeEvents(t, evs))
		})
	}
}

func encodeEvents(t *testing.T, evs []ir.Event) []byte {
	t.Helper()
	sink := &sinkRecorder{}
	enc := Generate.NewStreamEncoder(sink, protocol.StreamOptions{})
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			t.Fatalf("encode %+v: %v", ev, err)
		}
	}
	return sink.lines()
}
