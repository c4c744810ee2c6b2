package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// seedFiles adds every fixture of a testdata folder to the corpus.
func seedFiles(f *testing.F, dir, ext string) {
	for _, path := range fixtures(f, dir, ext) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	seedFiles(f, "request", ".json")
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:,%zz"}}]}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"tool","tool_call_id":"x","content":[{"type":"file","file":{"file_id":"f"}}]}],"max_tokens":1e300}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := Chat.DecodeRequest(body)
		if root := gjson.ParseBytes(body); gjson.ValidBytes(body) && root.IsObject() {
			// The members index must read exactly what gjson reads.
			direct, derr := decodeMembers(root)
			if !reflect.DeepEqual(direct, req) || fmt.Sprint(derr) != fmt.Sprint(err) {
				t.Fatalf("indexed and direct decoding differ for %s:\n%+v %v\n%+v %v", body, req, err, direct, derr)
			}
		}
		if err != nil {
			e, ok := err.(*ir.Error)
			if !ok || e.Status != 400 {
				t.Fatalf("decode error is not a 400 *ir.Error: %#v", err)
			}
			if !json.Valid(Chat.EncodeError(e)) {
				t.Fatalf("error body is not JSON")
			}
			return
		}
		if req.Model == "" {
			t.Fatalf("accepted a request without a model: %s", body)
		}
		out, err := Chat.EncodeRequest(req)
		if err == nil && !json.Valid(out) {
			t.Fatalf("encoded request is not JSON: %s", out)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	seedFiles(f, "response", ".json")
	f.Add([]byte(`{"choices":[{"message":{"content":[1,{"text":2}],"tool_calls":[{"function":{"arguments":{"a":[]}}}]}}],"usage":{"prompt_tokens":1e99}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := Chat.DecodeResponse(body)
		if err != nil {
			if _, ok := err.(*ir.Error); !ok {
				t.Fatalf("error is not *ir.Error: %#v", err)
			}
			return
		}
		out, err := Chat.EncodeResponse(resp)
		if err != nil || !json.Valid(out) {
			t.Fatalf("re-encoding failed: %v %s", err, out)
		}
		Chat.SniffUsage(body)
	})
}

func FuzzDecodeError(f *testing.F) {
	f.Add(404, []byte(`{"error":{"message":"no such model","code":"model_not_found"}}`))
	f.Add(500, []byte(`<html>`))
	f.Add(429, []byte(`[{"error":"x"}]`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := Chat.DecodeError(status, body)
		if e == nil || e.Message == "" || len(e.Message) > maxErrorMessage+len("…") {
			t.Fatalf("bad error: %#v", e)
		}
		if !json.Valid(Chat.EncodeError(e)) {
			t.Fatal("error body is not JSON")
		}
	})
}

// FuzzStreamDecoder feeds each line of the input as one event's data, then
// checks the events form a well-ordered stream and re-encode to valid JSON.
func FuzzStreamDecoder(f *testing.F) {
	for _, path := range fixtures(f, "stream", ".sse") {
		f.Add(bytes.Join(readSSE(f, path), []byte("\n")))
	}
	f.Add([]byte(chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f"}},{"index":0,"id":"b"}]}`, "") + "\n" + chunk(`{"tool_calls":[{"function":{"arguments":"x"}}]}`, "stop")))
	f.Fuzz(func(t *testing.T, input []byte) {
		evs, err := decodeAll(bytes.Split(input, []byte("\n")))
		if err != nil {
			if _, ok := err.(*ir.Error); !ok {
				t.Fatalf("error is not *ir.Error: %#v", err)
			}
		}
		checkWellFormed(t, evs, err == nil)
		sink := &recordSink{}
		enc := NewChatStreamEncoderWith(sink, ChatStreamOptions{IncludeUsage: true})
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				t.Fatalf("encode: %v", err)
			}
		}
		for _, d := range sink.data {
			if d != "[DONE]" && !json.Valid([]byte(d)) {
				t.Fatalf("chunk is not JSON: %s", d)
			}
		}
	})
}

// checkWellFormed asserts the stream grammar: Start first, blocks opened in
// increasing index order, deltas only to the open block, nothing after Done.
func checkWellFormed(t *testing.T, evs []ir.Event, complete bool) {
	t.Helper()
	open, next := -1, 0
	for i, ev := range evs {
		if (i == 0) != (ev.Type == ir.EventStart) {
			t.Fatalf("event %d: Start must come first and only once: %+v", i, ev)
		}
		switch ev.Type {
		case ir.EventBlockStart:
			if open >= 0 || ev.Index != next {
				t.Fatalf("event %d: block %d opened while %d open, next %d", i, ev.Index, open, next)
			}
			open, next = ev.Index, next+1
		case ir.EventDelta:
			if ev.Index != open {
				t.Fatalf("event %d: delta to block %d while %d open", i, ev.Index, open)
			}
		case ir.EventBlockStop:
			if ev.Index != open {
				t.Fatalf("event %d: closing block %d while %d open", i, ev.Index, open)
			}
			open = -1
		case ir.EventDone:
			if i != len(evs)-1 {
				t.Fatalf("event %d: Done before the end", i)
			}
		}
	}
	if complete && (len(evs) == 0 || evs[len(evs)-1].Type != ir.EventDone) {
		t.Fatalf("a stream that finished cleanly must end with Done")
	}
}
