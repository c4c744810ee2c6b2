package anthropic

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	goldenfile "github.com/turnpike-gw/turnpike/internal/protocol/golden"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

func seedFrom(f *testing.F, pattern string) {
	names, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
}

// Any request body either fails with a 400 or decodes to IR that encodes.
func FuzzDecodeRequest(f *testing.F) {
	seedFrom(f, "requests/*.json")
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"},{"role":"system","content":[{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]},{"role":"system","content":"c"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := Messages.DecodeRequest(body)
		if err != nil {
			if e, ok := err.(*ir.Error); !ok || e.Status != 400 {
				t.Fatalf("non-400 failure %v", err)
			}
			return
		}
		if _, err := Messages.EncodeRequest(req); err != nil {
			if _, ok := err.(*ir.Error); !ok {
				t.Fatalf("encode failed with a non-IR error: %v", err)
			}
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	seedFrom(f, "responses/*.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := Messages.DecodeResponse(body)
		if err != nil {
			return
		}
		if _, err := Messages.EncodeResponse(resp); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		Messages.SniffUsage(body)
	})
}

// The input is split into events on blank-line-free lines: "name\tdata".
// Every event sequence must decode without panicking, and whatever the
// decoder emits must re-encode.
func FuzzStreamDecoder(f *testing.F) {
	for _, seed := range goldenfile.StreamSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		dec := Messages.NewStreamDecoder()
		enc := Messages.NewStreamEncoder(discard{}, protocol.StreamOptions{})
		emit := func(ev ir.Event) error { return enc.Encode(ev) }
		for _, line := range bytes.Split(input, []byte("\n")) {
			name, data, _ := bytes.Cut(line, []byte("\t"))
			Messages.SniffStreamUsage(string(name), data)
			if err := dec.Decode(string(name), data, emit); err != nil {
				return
			}
		}
		_ = dec.Finish(emit)
	})
}

type discard struct{}

func (discard) Event(string, []byte) error { return nil }
