package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/turnpike-gw/turnpike/internal/protocol/golden"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// fixtures lists the inputs of one testdata folder (files with ext that are
// not goldens themselves).
func fixtures(t testing.TB, dir, ext string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		if !strings.Contains(p, ".golden.") {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no fixtures in testdata/%s", dir)
	}
	return out
}

// golden compares got with the golden file at path (see package golden).
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenfile.Compare(t, path, got)
}

func irJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func indentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func goldenPath(fixture, suffix string) string { return goldenfile.Path(fixture, suffix) }

func TestRequestGoldens(t *testing.T) {
	for _, path := range fixtures(t, "request", ".json") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			req, err := Chat.DecodeRequest(body)
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			golden(t, goldenPath(path, ".ir.golden.json"), irJSON(t, req))
			up, err := Chat.EncodeRequest(req)
			if err != nil {
				t.Fatalf("EncodeRequest: %v", err)
			}
			golden(t, goldenPath(path, ".upstream.golden.json"), indentJSON(t, up))
			// What we send upstream must read back as the same request,
			// apart from what the encoder deliberately leaves out.
			back, err := Chat.DecodeRequest(up)
			if err != nil {
				t.Fatalf("re-decoding the upstream body: %v", err)
			}
			if got, want := len(back.Messages), len(req.Messages); got != want {
				t.Errorf("re-decoded %d messages, want %d", got, want)
			}
		})
	}
}

func TestResponseGoldens(t *testing.T) {
	for _, path := range fixtures(t, "response", ".json") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := Chat.DecodeResponse(body)
			if err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			golden(t, goldenPath(path, ".ir.golden.json"), irJSON(t, resp))
			out, err := Chat.EncodeResponse(resp)
			if err != nil {
				t.Fatalf("EncodeResponse: %v", err)
			}
			golden(t, goldenPath(path, ".encoded.golden.json"), indentJSON(t, out))
			sniffed, ok := Chat.SniffUsage(body)
			if !ok || sniffed != resp.Usage {
				t.Errorf("SniffUsage = %+v, %v; want %+v", sniffed, ok, resp.Usage)
			}
		})
	}
}

// readSSE returns the data of every event in an SSE fixture.
func readSSE(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := sse.NewReader(f, 0)
	var out [][]byte
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(ev.Data))
	}
}

// decodeAll runs a whole stream through a fresh decoder.
func decodeAll(chunks [][]byte) ([]ir.Event, error) {
	d := Chat.NewStreamDecoder()
	var evs []ir.Event
	emit := func(ev ir.Event) error { evs = append(evs, ev); return nil }
	for _, c := range chunks {
		if err := d.Decode("", c, emit); err != nil {
			return evs, err
		}
	}
	return evs, d.Finish(emit)
}

// sseSink frames events as the relay would, to compare whole streams.
type sseSink struct{ out bytes.Buffer }

func (s *sseSink) Event(name string, data []byte) error {
	var buf bytes.Buffer
	return sse.WriteEvent(&s.out, &buf, name, data)
}

// encodeAll runs events through an encoder with a fixed clock.
func encodeAll(t testing.TB, evs []ir.Event, opts ChatStreamOptions) []byte {
	t.Helper()
	sink := &sseSink{}
	enc := NewChatStreamEncoderWith(sink, opts).(*chatStreamEncoder)
	enc.now = func() time.Time { return time.Unix(1700000000, 0) }
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			t.Fatalf("Encode(%+v): %v", ev, err)
		}
	}
	return sink.out.Bytes()
}

func TestStreamGoldens(t *testing.T) {
	for _, path := range fixtures(t, "stream", ".sse") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			chunks := readSSE(t, path)
			evs, err := decodeAll(chunks)
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			golden(t, goldenPath(path, ".ir.golden.json"), irJSON(t, evs))
			out := encodeAll(t, evs, ChatStreamOptions{IncludeUsage: true})
			golden(t, goldenPath(path, ".encoded.golden.sse"), out)
			// Our own output must decode to the same events.
			again, err := decodeAll(readSSEBytes(t, out))
			if err != nil {
				t.Fatalf("re-decoding our stream: %v", err)
			}
			if got, want := irJSON(t, again), irJSON(t, evs); !bytes.Equal(got, want) {
				t.Errorf("re-decoded events differ:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func readSSEBytes(t testing.TB, b []byte) [][]byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.sse")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return readSSE(t, p)
}
