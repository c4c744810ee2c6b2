package relay

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var imageFactors = json.RawMessage(`{"image_factors":{"1024x1024":1,"1792x1024":2,"hd":2}}`)

func TestImageGenerationIsBilledPerImageWithSizeAndQualityFactors(t *testing.T) {
	cases := []struct {
		name, body string
		want       int64
	}{
		// 0.04 $ × 2 (size) × 2 (quality) × 2 images = 0.32 $.
		{"large hd pair", `{"model":"img-1","prompt":"a cat","n":2,"size":"1792x1024","quality":"hd"}`, 160000},
		{"defaults are one plain image", `{"model":"img-1","prompt":"a cat"}`, 20000},
		{"unknown size has factor one", `{"model":"img-1","prompt":"a cat","size":"512x512"}`, 20000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("img-1", store.ModelPrice{PerCall: 0.04, Extra: imageFactors})
			f := &fakeEndpoints{}
			ch := e.endpointChannel("main", f, 1, "img-1")
			before := e.balance()
			resp := e.post("/v1/images/generations", testKey, tc.body)
			body := readJSON(t, resp)
			if resp.StatusCode != 200 || gjsonOf(body, "data.0.url") == "" {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
			got := f.last(t)
			if got.path != "/v1/images/generations" || got.auth != "Bearer "+ch.Key || got.json("model").String() != "img-1-mapped" || got.json("prompt").String() != "a cat" {
				t.Fatalf("upstream got %s %s", got.path, got.raw)
			}
			if charged := before - e.balance(); charged != tc.want {
				t.Fatalf("charged %d, want %d", charged, tc.want)
			}
			if _, other := e.lastConsume(); other["endpoint"] != "images_generations" {
				t.Fatalf("other %v", other)
			}
		})
	}
}

// multipartBody builds a form; files maps field name to file content.
func multipartBody(t *testing.T, fields map[string]string, files map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	for k, v := range files {
		w, err := mw.CreateFormFile(k, k+".bin")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(v))
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

func TestMultipartImageEditIsReplayedWithFilesAndMappedModel(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A 16-byte memory cap sends the large image through a spool file.
	e := newEnv(t, func(o *Options) { o.MultipartMemory = 16 })
	e.price("img-1", store.ModelPrice{PerCall: 0.04, Extra: imageFactors})
	bad := &fakeEndpoints{status: 503}
	good := &fakeEndpoints{}
	e.channel("bad", newFakeEndpoints(t, bad).URL, func(c *store.Channel) { c.Models, c.Priority = []string{"img-1"}, 10 })
	e.endpointChannel("good", good, 1, "img-1")
	image := strings.Repeat("PNG-bytes-", 10000)
	body, ct := multipartBody(t, map[string]string{"model": "img-1", "prompt": "add a hat", "n": "2", "size": "1024x1024"},
		map[string]string{"image": image, "mask": "tiny-mask"})
	before := e.balance()
	resp := e.postWith("/v1/images/edits", ct, body)
	answer := readAll(resp)
	if resp.StatusCode != 200 || bad.calls() != 1 || good.calls() != 1 {
		t.Fatalf("status %d: %s (bad %d, good %d)", resp.StatusCode, answer, bad.calls(), good.calls())
	}
	for name, f := range map[string]*fakeEndpoints{"first": bad, "retried": good} {
		got := f.last(t)
		if string(got.files["image"]) != image || string(got.files["mask"]) != "tiny-mask" || got.filenames["image"] != "image.bin" {
			t.Fatalf("%s attempt got image of %d bytes, mask %q", name, len(got.files["image"]), got.files["mask"])
		}
		if got.contentLength <= int64(len(image)) {
			t.Errorf("%s attempt had no content length: %d", name, got.contentLength)
		}
	}
	got := good.last(t)
	if got.path != "/v1/images/edits" || got.fields["model"] != "img-1-mapped" || got.fields["prompt"] != "add a hat" || got.fields["n"] != "2" {
		t.Fatalf("upstream got %s %v", got.path, got.fields)
	}
	if charged := before - e.balance(); charged != 40000 {
		t.Fatalf("charged %d, want 40000", charged)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "turnpike-upload-*")); len(left) != 0 {
		t.Fatalf("spool files left behind: %v", left)
	}
}

func TestJSONImageEditsAndTheLegacyEditsPathAreImageEditing(t *testing.T) {
	cases := []struct {
		name, path, body, wantPrompt string
	}{
		{"images edits in JSON", "/v1/images/edits", `{"model":"img-1","prompt":"a hat","images":[{"image_url":"https://x/y.png"}]}`, "a hat"},
		{"legacy edits instruction becomes the prompt", "/v1/edits", `{"model":"img-1","input":"https://x/y.png","instruction":"a scarf"}`, "a scarf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("img-1", store.ModelPrice{PerCall: 0.04})
			f := &fakeEndpoints{}
			e.endpointChannel("main", f, 1, "img-1")
			before := e.balance()
			resp := e.post(tc.path, testKey, tc.body)
			answer := readAll(resp)
			got := f.last(t)
			if resp.StatusCode != 200 || got.path != "/v1/images/edits" || got.json("prompt").String() != tc.wantPrompt || got.json("model").String() != "img-1-mapped" {
				t.Fatalf("status %d %s; upstream got %s %s", resp.StatusCode, answer, got.path, got.raw)
			}
			if charged := before - e.balance(); charged != 20000 {
				t.Fatalf("charged %d, want 20000", charged)
			}
		})
	}
}

func TestTranscriptsPassThroughEveryFormatAndBillByDuration(t *testing.T) {
	cases := []struct {
		name, path, format, wantType, wantBody string
		want                                   int64
	}{
		// 90.5 s at 0.006 $/min = 0.00905 $.
		{"verbose json is billed by its duration", "/v1/audio/transcriptions", "verbose_json", "application/json", `"duration":90.5`, 4525},
		{"json has no duration: per call", "/v1/audio/transcriptions", "json", "application/json", `{"text":"hello world"}`, 5000},
		{"text", "/v1/audio/transcriptions", "text", "text/plain; charset=utf-8", "hello world\n", 5000},
		{"srt", "/v1/audio/transcriptions", "srt", "application/x-subrip", "00:00:00,000 --> 00:00:01,000", 5000},
		{"vtt translation", "/v1/audio/translations", "vtt", "text/vtt", "WEBVTT", 5000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("whisper-1", store.ModelPrice{PerCall: 0.01, Extra: json.RawMessage(`{"per_minute":0.006}`)})
			f := &fakeEndpoints{}
			ch := e.endpointChannel("main", f, 1, "whisper-1")
			audio := "RIFF-fake-wave-" + strings.Repeat("x", 3000)
			body, ct := multipartBody(t, map[string]string{"model": "whisper-1", "response_format": tc.format, "language": "en"}, map[string]string{"file": audio})
			before := e.balance()
			resp := e.postWith(tc.path, ct, body)
			answer := readAll(resp)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.wantType || !strings.Contains(answer, tc.wantBody) {
				t.Fatalf("status %d type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), answer)
			}
			got := f.last(t)
			if got.path != tc.path || got.auth != "Bearer "+ch.Key || string(got.files["file"]) != audio ||
				got.fields["model"] != "whisper-1-mapped" || got.fields["language"] != "en" || got.fields["response_format"] != tc.format {
				t.Fatalf("upstream got %s %v", got.path, got.fields)
			}
			if charged := before - e.balance(); charged != tc.want {
				t.Fatalf("charged %d, want %d", charged, tc.want)
			}
		})
	}
}

func TestTranscriptionNeedsAMultipartFile(t *testing.T) {
	e := newEnv(t)
	e.price("whisper-1", store.ModelPrice{PerCall: 0.01})
	e.endpointChannel("main", &fakeEndpoints{}, 1, "whisper-1")
	cases := []struct {
		name, ct, body, param string
	}{
		{"JSON body", "application/json", `{"model":"whisper-1"}`, ""},
		{"no file part", "", "", "file"},
		{"no model", "", "", "model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var resp = e.post("/v1/audio/transcriptions", testKey, tc.body)
			if tc.ct == "" {
				fields := map[string]string{"model": "whisper-1"}
				files := map[string]string{}
				if tc.param == "model" {
					fields, files = map[string]string{}, map[string]string{"file": "abc"}
				}
				b, ct := multipartBody(t, fields, files)
				resp = e.postWith("/v1/audio/transcriptions", ct, b)
			}
			body := readJSON(t, resp)
			if resp.StatusCode != 400 || gjsonOf(body, "error.param") != tc.param {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
		})
	}
}

func TestSpeechIsStreamedAndBilledByCharacters(t *testing.T) {
	e := newEnv(t)
	e.price("tts-1", store.ModelPrice{Extra: json.RawMessage(`{"per_million_chars":15}`)})
	f := &fakeEndpoints{}
	ch := e.endpointChannel("main", f, 1, "tts-1")
	before := e.balance()
	resp := e.post("/v1/audio/speech", testKey, `{"model":"tts-1","input":"Hello world","voice":"alloy","response_format":"mp3"}`)
	audio := readAll(resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" || audio != speechAudio {
		t.Fatalf("status %d type %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(audio))
	}
	got := f.last(t)
	if got.path != "/v1/audio/speech" || got.auth != "Bearer "+ch.Key || got.json("model").String() != "tts-1-mapped" || got.json("voice").String() != "alloy" {
		t.Fatalf("upstream got %s %s", got.path, got.raw)
	}
	// 11 characters at 15 $ per million = 0.000165 $ = 82.5 units, rounded half up.
	if charged := before - e.balance(); charged != 83 {
		t.Fatalf("charged %d, want 83", charged)
	}
	if _, other := e.lastConsume(); other["characters"] != float64(11) || other["bytes"] != float64(len(speechAudio)) {
		t.Fatalf("other %v", other)
	}
}

func TestSpoolFilesAreRemovedWhenTheCallFails(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e := newEnv(t, func(o *Options) { o.MultipartMemory = 8 })
	e.price("whisper-1", store.ModelPrice{PerCall: 0.01})
	f := &fakeEndpoints{status: 400}
	e.endpointChannel("main", f, 1, "whisper-1")
	before := e.balance()
	body, ct := multipartBody(t, map[string]string{"model": "whisper-1"}, map[string]string{"file": strings.Repeat("a", 4096)})
	resp := e.postWith("/v1/audio/transcriptions", ct, body)
	answer := readJSON(t, resp)
	if resp.StatusCode != 400 || gjsonOf(answer, "error.message") != "upstream says 400" {
		t.Fatalf("status %d body %v", resp.StatusCode, answer)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "turnpike-upload-*")); len(left) != 0 {
		t.Fatalf("spool files left behind: %v", left)
	}
	e.flush()
	if e.balance() != before {
		t.Fatalf("a failed call was charged %d", before-e.balance())
	}
}
