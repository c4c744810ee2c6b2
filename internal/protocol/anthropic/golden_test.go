package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	goldenfile "github.com/turnpike-gw/turnpike/internal/protocol/golden"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// golden compares got with the golden file at path (see package golden).
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenfile.Compare(t, path, got)
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func base(path, suffix string) string { return strings.TrimSuffix(path, suffix) }

// Each client request decodes to the IR golden, and the IR encodes back to a
// request golden (the body sent to a messages-native upstream).
func TestRequestGoldens(t *testing.T) {
	for _, in := range goldenfile.Fixtures(t, "requests", ".json") {
		if strings.HasSuffix(in, ".ir.json") || strings.HasSuffix(in, ".out.json") {
			continue
		}
		t.Run(filepath.Base(in), func(t *testing.T) {
			body, _ := os.ReadFile(in)
			req, err := Messages.DecodeRequest(body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden(t, base(in, ".json")+".ir.json", indentJSON(t, req))
			out, err := Messages.EncodeRequest(req)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden(t, base(in, ".json")+".out.json", goldenfile.Indent(t, out))
		})
	}
}

// IR requests shaped like those other formats produce encode to the golden
// upstream body.
func TestEncodeForeignRequestGoldens(t *testing.T) {
	goldenfile.EncodeRequests(t, "foreign", Messages.EncodeRequest)
}

func TestResponseGoldens(t *testing.T) {
	for _, in := range goldenfile.Fixtures(t, "responses", ".json") {
		if strings.HasSuffix(in, ".ir.json") || strings.HasSuffix(in, ".out.json") {
			continue
		}
		t.Run(filepath.Base(in), func(t *testing.T) {
			body, _ := os.ReadFile(in)
			resp, err := Messages.DecodeResponse(body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden(t, base(in, ".json")+".ir.json", indentJSON(t, resp))
			out, err := Messages.EncodeResponse(resp)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden(t, base(in, ".json")+".out.json", goldenfile.Indent(t, out))
		})
	}
}

// recorder is an EventSink that renders events as SSE text.
type recorder struct{ buf bytes.Buffer }

func (r *recorder) Event(name string, data []byte) error {
	var scratch bytes.Buffer
	return sse.WriteEvent(&r.buf, &scratch, name, data)
}

func encodeEvents(t *testing.T, evs []ir.Event) []byte {
	t.Helper()
	rec := &recorder{}
	enc := Messages.NewStreamEncoder(rec, protocol.StreamOptions{})
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			t.Fatalf("encode %+v: %v", ev, err)
		}
	}
	return rec.buf.Bytes()
}

// Upstream streams decode to IR event goldens, which re-encode to the
// client stream golden.
func TestStreamGoldens(t *testing.T) {
	for _, in := range goldenfile.Fixtures(t, "streams", ".sse") {
		if strings.HasSuffix(in, ".out.sse") {
			continue
		}
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, _ := os.ReadFile(in)
			evs, err := goldenfile.DecodeSSE(raw, Messages.NewStreamDecoder())
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			golden(t, base(in, ".sse")+".events.json", indentJSON(t, evs))
			golden(t, base(in, ".sse")+".out.sse", encodeEvents(t, evs))
		})
	}
}

// IR event sequences as other formats' decoders produce them (usage late,
// no BlockStop, deltas without BlockStart) encode to the documented sequence.
func TestEncodeForeignStreamGoldens(t *testing.T) {
	for _, in := range goldenfile.Fixtures(t, "foreign", ".events.json") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			var evs []ir.Event
			raw, _ := os.ReadFile(in)
			if err := json.Unmarshal(raw, &evs); err != nil {
				t.Fatal(err)
			}
			golden(t, base(in, ".events.json")+".out.sse", encodeEvents(t, evs))
		})
	}
}

func ExampleEncodeModelList() {
	fmt.Printf("%s\n", EncodeModelList([]string{"model-a"}, mustTime("2025-01-02T03:04:05Z")))
	// Output: {"data":[{"type":"model","id":"model-a","display_name":"model-a","created_at":"2025-01-02T03:04:05Z"}],"has_more":false,"first_id":"model-a","last_id":"model-a"}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func itoa(n int) string { return strconv.Itoa(n) }
