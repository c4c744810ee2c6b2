package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

func addFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
}

// Any body either decodes (and then re-encodes without panicking) or fails
// with a 400 naming what is wrong.
func FuzzDecodeRequest(f *testing.F) {
	addFiles(f, "requests/*.json")
	f.Add([]byte(`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"responseSchema":{"type":"OBJECT","nullable":true}}}`))
	f.Add([]byte(`{"contents":[{"parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"t","thought":true},{"text":"x"},{"functionCall":{"name":"f"},"thoughtSignature":"s"},{"functionCall":{"name":"g"},"thoughtSignature":"skip_thought_signature_validator"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = CheckConvertible(body)
		_, _ = DecodeCountTokensRequest(body)
		req, err := Generate.DecodeRequest(body)
		if err != nil {
			if e := asIRError(t, err); e.Status != 400 {
				t.Fatalf("status %d for %q", e.Status, body)
			}
			return
		}
		out, err := Generate.EncodeRequest(req)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON encoded: %s", out)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	addFiles(f, "responses/*.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = Generate.SniffUsage(body)
		resp, err := Generate.DecodeResponse(body)
		if err != nil {
			return
		}
		out, err := Generate.EncodeResponse(resp)
		if err != nil || !json.Valid(out) {
			t.Fatalf("re-encoding failed: %v %s", err, out)
		}
	})
}

// Each line of the input is one upstream event. A stream that decodes must
// be well formed, and its events must encode to valid chunks.
func FuzzStreamDecoder(f *testing.F) {
	addFiles(f, "streams/*.jsonl")
	f.Add([]byte("[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"thought\":true}]}}]}]\n{\"error\":{\"code\":500}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		for _, l := range lines {
			_, _ = Generate.SniffStreamUsage("", l)
		}
		evs, err := decodeStream(lines)
		if err != nil {
			return
		}
		checkWellFormed(t, evs)
		enc := Generate.NewStreamEncoder(validatingSink{t}, protocol.StreamOptions{})
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				t.Fatalf("encode: %v", err)
			}
		}
	})
}

func checkWellFormed(t *testing.T, evs []ir.Event) {
	t.Helper()
	if len(evs) == 0 || evs[0].Type != ir.EventStart || evs[len(evs)-1].Type != ir.EventDone {
		t.Fatalf("stream not framed by start and done: %s", eventTypes(evs))
	}
	open, next := -1, 0
	for _, ev := range evs {
		switch ev.Type {
		case ir.EventBlockStart:
			if open >= 0 || ev.Index != next {
				t.Fatalf("block %d starts while %d is open (next %d)", ev.Index, open, next)
			}
			open, next = ev.Index, next+1
		case ir.EventDelta:
			if ev.Index != open {
				t.Fatalf("delta for block %d while %d is open", ev.Index, open)
			}
		case ir.EventBlockStop:
			if ev.Index != open {
				t.Fatalf("stop for block %d while %d is open", ev.Index, open)
			}
			open = -1
		}
	}
}

type validatingSink struct{ t *testing.T }

func (s validatingSink) Event(_ string, data []byte) error {
	if !json.Valid(data) {
		s.t.Fatalf("invalid chunk: %s", data)
	}
	return nil
}

// Arbitrary IR event sequences, including ones no decoder should produce,
// never make the encoder panic or write invalid JSON.
func FuzzStreamEncoder(f *testing.F) {
	f.Add([]byte{1, 0, 0, 2, 3, 4, 3, 3, 5, 4, 3, 0, 5, 0, 0, 7, 0, 0})
	f.Add([]byte{2, 1, 3, 3, 1, 2, 3, 2, 6, 6, 0, 1, 7, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		enc := Generate.NewStreamEncoder(validatingSink{t}, protocol.StreamOptions{})
		for i := 0; i+2 < len(data); i += 3 {
			n := min(int(data[i+2])%8, len(data)-i-3)
			frag := string(data[i+3 : i+3+n])
			ev := ir.Event{Type: ir.EventType(data[i]%8 + 1), Block: ir.BlockKind(data[i+1] % 5),
				Index: int(data[i+1]), Text: frag, ArgumentsDelta: frag, ToolName: frag,
				StopReason: ir.StopReason(frag), Usage: &ir.Usage{OutputTokens: n}}
			if data[i+1]%2 == 0 {
				ev.Signature = frag
			}
			_ = enc.Encode(ev)
		}
	})
}

func FuzzPageToken(f *testing.F) {
	f.Add(EncodePageToken(0))
	f.Add(EncodePageToken(1 << 20))
	f.Add("bzotMQ")
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, tok string) {
		n, err := DecodePageToken(tok)
		if err != nil {
			return
		}
		if n < 0 || n > maxPageOffset {
			t.Fatalf("offset %d out of range", n)
		}
		if back, err := DecodePageToken(EncodePageToken(n)); err != nil || back != n {
			t.Fatalf("round trip of %d gave %d %v", n, back, err)
		}
	})
}

func FuzzEmbedDecoders(f *testing.F) {
	f.Add([]byte(`{"content":{"parts":[{"text":"Hello"}]},"outputDimensionality":8}`))
	f.Add([]byte(`{"requests":[{"model":"models/e","content":{"parts":[{"text":"a"}]}}]}`))
	f.Add([]byte(`{"embeddings":[{"values":[0.1,2e3]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = EmbedOutputDimensionality(body)
		_, _ = DecodeEmbedContent(body)
		texts, models, err := DecodeBatchEmbedContents(body)
		if err == nil && len(texts) != len(models) {
			t.Fatalf("%d texts but %d models", len(texts), len(models))
		}
		if vecs, err := DecodeBatchEmbedResponse(body); err == nil {
			if !json.Valid(EncodeBatchEmbedResponse(vecs)) {
				t.Fatal("re-encoded embeddings are not JSON")
			}
		}
	})
}

func FuzzDecodeError(f *testing.F) {
	f.Add(400, []byte(`{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}`))
	f.Add(503, []byte(`[{"error":{"message":"busy"}}]`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := Generate.DecodeError(status, body)
		if e.Status < 400 || e.Message == "" || len(e.Message) > maxMessage+len("…") {
			t.Fatalf("bad error %+v", e)
		}
		if utf8.ValidString(e.Message) && !json.Valid(Generate.EncodeError(e)) {
			t.Fatal("encoded error is not JSON")
		}
	})
}
