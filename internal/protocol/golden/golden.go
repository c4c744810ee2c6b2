// Package golden compares codec output with golden files under testdata/,
// for the protocol packages' tests. `go test ./internal/protocol/... -update`
// rewrites the files from current output; every rewritten file must then be
// reviewed by eye against the provider's documented shapes.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/sse"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ from current output")

// Compare checks got against the golden file at path, or rewrites the file
// when the test runs with -update.
func Compare(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden %s (run with -update): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from output:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// JSON renders v as indented JSON with a final newline, the form golden
// files are kept in so diffs stay readable.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// Path derives a golden file's path from its fixture: testdata/x/a.json
// with suffix ".golden.ir.json" gives testdata/x/a.golden.ir.json.
func Path(fixture, suffix string) string {
	return strings.TrimSuffix(fixture, filepath.Ext(fixture)) + suffix
}

// Indent re-indents raw JSON the way golden files are kept, with a final
// newline; invalid JSON fails the test.
func Indent(t testing.TB, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// Fixtures lists testdata/dir/*suffix, leaving out names ending in any of
// skip; none at all fails the test.
func Fixtures(t testing.TB, dir, suffix string, skip ...string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*"+suffix))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures in testdata/%s (*%s)", dir, suffix)
	}
	out := names[:0]
	for _, n := range names {
		if !hasAnySuffix(n, skip) {
			out = append(out, n)
		}
	}
	return out
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// StreamSeeds turns the SSE fixtures testdata/streams/*.sse into fuzz seeds
// of stream decoders: one event a line, "name\tdata".
func StreamSeeds() [][]byte {
	names, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	var out [][]byte
	for _, n := range names {
		raw, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var seed bytes.Buffer
		var name []byte
		for _, line := range bytes.Split(raw, []byte("\n")) {
			switch {
			case bytes.HasPrefix(line, []byte("event: ")):
				name = line[7:]
			case bytes.HasPrefix(line, []byte("data: ")):
				seed.Write(name)
				seed.WriteByte('\t')
				seed.Write(line[6:])
				seed.WriteByte('\n')
				name = nil
			}
		}
		out = append(out, seed.Bytes())
	}
	return out
}

// EncodeRequests encodes every IR request testdata/dir/*.ir.json with
// encode and compares the indented body with the golden *.out.json beside
// it: the request half of every upstream codec's goldens.
func EncodeRequests(t *testing.T, dir string, encode func(*ir.Request) ([]byte, error)) {
	t.Helper()
	for _, in := range Fixtures(t, dir, ".ir.json") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var req ir.Request
			if err := json.Unmarshal(raw, &req); err != nil {
				t.Fatal(err)
			}
			out, err := encode(&req)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			Compare(t, strings.TrimSuffix(in, ".ir.json")+".out.json", Indent(t, out))
		})
	}
}

// DecodeSSE runs a whole SSE text through dec, a fresh stream decoder, and
// returns the IR events it emitted up to the first error.
func DecodeSSE(raw []byte, dec protocol.StreamDecoder) ([]ir.Event, error) {
	var evs []ir.Event
	emit := func(ev ir.Event) error { evs = append(evs, ev); return nil }
	r := sse.NewReader(bytes.NewReader(raw), 0)
	defer r.Release()
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
