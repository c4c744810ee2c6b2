package relay

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// The OpenAI event streams that are not chat end with an error event when
// the upstream breaks off before their terminal event, and the row says
// incomplete (CONTRACT §22).
func TestTruncatedEventStreamsEndWithAnErrorEvent(t *testing.T) {
	cases := []struct {
		name, model, path, body string
		events                  []string
	}{
		{"image generation", "gpt-image-1", "/v1/images/generations", `{"model":"gpt-image-1","prompt":"a cat","stream":true,"partial_images":2}`,
			[]string{`{"type":"image_generation.partial_image","b64_json":"AAAA","partial_image_index":0}`}},
		{"responses", "gpt-4o-mini", "/v1/responses", `{"model":"gpt-4o-mini","stream":true,"input":"Hi"}`,
			[]string{`{"type":"response.created","response":{"id":"resp_1","status":"in_progress"}}`,
				`{"type":"response.output_text.delta","delta":"Hel"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price(tc.model, store.ModelPrice{PerCall: 0.01, InputPerMTok: 1, OutputPerMTok: 2})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				for _, ev := range tc.events {
					_, _ = io.WriteString(w, "data: "+ev+"\n\n")
				}
			}))
			defer srv.Close()
			e.channel("up", srv.URL, func(c *store.Channel) { c.Models = []string{tc.model} })
			resp := e.post(tc.path, testKey, tc.body)
			got := readAll(resp)
			if resp.StatusCode != 200 || !strings.Contains(got, "event: error\ndata: {\"type\":\"error\",\"code\":\"stream_broken\"") {
				t.Fatalf("status %d, no error event:\n%s", resp.StatusCode, got)
			}
			if _, other := e.lastConsume(); other["incomplete"] != true {
				t.Fatalf("row other %v, want incomplete", other)
			}
		})
	}
}

// Speech audio cut off by the upstream is never handed over as a whole
// file: the client's read of the body fails, and the row says incomplete.
func TestTruncatedSpeechAudioFailsTheClientsRead(t *testing.T) {
	e := newEnv(t)
	e.price("tts-1", store.ModelPrice{PerCall: 0.01})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = io.WriteString(w, strings.Repeat("ID3-audio-bytes-", 4000))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer srv.Close()
	e.channel("up", srv.URL, func(c *store.Channel) { c.Models = []string{"tts-1"} })
	resp := e.post("/v1/audio/speech", testKey, `{"model":"tts-1","input":"hello","voice":"alloy"}`)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || err == nil {
		t.Fatalf("status %d, read %d bytes with no error", resp.StatusCode, len(got))
	}
	// The connection closes before the call settles: wait for its row.
	waitFor(t, func() bool {
		e.flush()
		logs, _, _ := e.st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{})
		return len(logs) > 0
	})
	if _, other := e.lastConsume(); other["incomplete"] != true {
		t.Fatalf("row other %v, want incomplete", other)
	}
}
