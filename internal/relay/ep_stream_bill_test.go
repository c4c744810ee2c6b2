package relay

import (
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Streamed endpoint answers go through the one stream tail: the usage the
// upstream reports on the terminal event is billed, as for the whole answer.
func TestStreamedEndpointAnswersBillTheUpstreamsUsage(t *testing.T) {
	cases := []struct {
		name, model, path string
		price             store.ModelPrice
		json              string
		form              map[string]string
		files             map[string]string
		wantEvent         string
		// want is in quota units at 500,000 a dollar.
		want       int64
		wantPrompt int
	}{
		{
			// 0.04 $ per image + 100k × 5 $/M + 200k × 40 $/M = 8.54 $.
			name: "image generation", model: "gpt-image-1", path: "/v1/images/generations",
			price:     store.ModelPrice{PerCall: 0.04, InputPerMTok: 5, OutputPerMTok: 40},
			json:      `{"model":"gpt-image-1","prompt":"a cat","stream":true,"partial_images":1}`,
			wantEvent: "image_generation.completed", want: 4270000, wantPrompt: 100000,
		},
		{
			name: "image edit", model: "gpt-image-1", path: "/v1/images/edits",
			price:     store.ModelPrice{PerCall: 0.04, InputPerMTok: 5, OutputPerMTok: 40},
			form:      map[string]string{"model": "gpt-image-1", "prompt": "a hat", "stream": "true"},
			files:     map[string]string{"image": "PNG-bytes"},
			wantEvent: "image_edit.completed", want: 4270000, wantPrompt: 100000,
		},
		{
			// 0.01 $ per call + 100k × 2.5 $/M + 50k × 10 $/M = 0.76 $.
			name: "transcription", model: "gpt-4o-transcribe", path: "/v1/audio/transcriptions",
			price:     store.ModelPrice{PerCall: 0.01, InputPerMTok: 2.5, OutputPerMTok: 10},
			form:      map[string]string{"model": "gpt-4o-transcribe", "stream": "true"},
			files:     map[string]string{"file": "RIFF-audio"},
			wantEvent: "transcript.text.done", want: 380000, wantPrompt: 100000,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price(tc.model, tc.price)
			f := &fakeEndpoints{}
			e.endpointChannel("main", f, 1, tc.model)
			before := e.balance()
			var body string
			if tc.form != nil {
				buf, ct := multipartBody(t, tc.form, tc.files)
				resp := e.postWith(tc.path, ct, buf)
				if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				body = readAll(resp)
			} else {
				resp := e.post(tc.path, testKey, tc.json)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				body = readAll(resp)
			}
			if !strings.Contains(body, tc.wantEvent) {
				t.Fatalf("the client did not get %s: %s", tc.wantEvent, body)
			}
			if charged := before - e.balance(); charged != tc.want {
				t.Fatalf("charged %d, want %d (the upstream's reported usage)", charged, tc.want)
			}
			row, other := e.lastConsume()
			if row.PromptTokens != tc.wantPrompt {
				t.Fatalf("row prompt tokens %d, want %d; other %v", row.PromptTokens, tc.wantPrompt, other)
			}
		})
	}
}

// A speech answer goes through the same tail with raw bytes: the client gets
// every byte under the upstream's type, and the row records them.
func TestSpeechIsRelayedAsRawBytesThroughTheStreamTail(t *testing.T) {
	e := newEnv(t)
	e.price("tts-1", store.ModelPrice{PerCall: 0.01})
	f := &fakeEndpoints{}
	e.endpointChannel("main", f, 1, "tts-1")
	resp := e.post("/v1/audio/speech", testKey, `{"model":"tts-1","input":"hello","voice":"alloy"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" {
		t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := readAll(resp); got != speechAudio {
		t.Fatalf("got %d bytes, want %d", len(got), len(speechAudio))
	}
	if _, other := e.lastConsume(); other["bytes"] != float64(len(speechAudio)) {
		t.Fatalf("other %v", other)
	}
}
