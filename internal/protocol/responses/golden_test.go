package responses

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/turnpike-gw/turnpike/internal/protocol/golden"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

// fixtures lists the inputs of one testdata folder, goldens excluded.
func fixtures(t testing.TB, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
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

func goldenPath(fixture, suffix string) string { return goldenfile.Path(fixture, suffix) }

func readFixture(t *testing.T, path string, v any) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return b
}

func indented(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b)
	}
	return append(out.Bytes(), '\n')
}

// testMeta fixes the random and clock-dependent parts of the output.
func testMeta() Meta { return Meta{ID: "TEST", CreatedAt: 1700000000, Model: "client-model"} }

func TestRequestsDecodeToGoldenIR(t *testing.T) {
	for _, path := range fixtures(t, "request") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			req, err := DecodeRequest(readFixture(t, path, nil))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(req, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, goldenPath(path, ".golden.ir.json"), append(got, '\n'))
		})
	}
}

func TestIRAnswersEncodeToGoldenResponseObjects(t *testing.T) {
	for _, path := range fixtures(t, "response") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var res ir.Response
			readFixture(t, path, &res)
			out, err := EncodeResponse(&res, testMeta())
			if err != nil {
				t.Fatal(err)
			}
			golden(t, goldenPath(path, ".golden.response.json"), indented(t, out))
		})
	}
}

// sseSink frames events as the relay does.
type sseSink struct {
	out bytes.Buffer
	buf bytes.Buffer
}

func (s *sseSink) Event(name string, data []byte) error {
	if !json.Valid(data) {
		return &ir.Error{Message: "invalid JSON event " + string(data)}
	}
	return sse.WriteEvent(&s.out, &s.buf, name, data)
}

func TestIREventsEncodeToGoldenResponseStreams(t *testing.T) {
	for _, path := range fixtures(t, "stream") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var events []ir.Event
			readFixture(t, path, &events)
			sink := &sseSink{}
			enc := NewStreamEncoder(sink, testMeta())
			for _, ev := range events {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			golden(t, goldenPath(path, ".golden.sse"), sink.out.Bytes())
		})
	}
}
