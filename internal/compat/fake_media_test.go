package compat

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// fakePNG is the picture every fake image answer carries: the same 1×1 PNG
// the Node tests send (env.IMAGE_BASE64).
const fakePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="

// speechBytes is the length of the fake speech audio: more than one 32 KiB
// read, so a gateway that streams it relays it in several pieces.
const speechBytes = 40000

// speechAudio is byte i = i*7 mod 251, which the Node test rebuilds.
func speechAudio() []byte {
	b := make([]byte, speechBytes)
	for i := range b {
		b[i] = byte(i * 7 % 251)
	}
	return b
}

var imageFields = []string{"model", "prompt", "n", "size", "quality", "response_format", "style", "user", "background",
	"moderation", "output_compression", "output_format", "partial_images", "stream"}

func (u *openAIUpstream) imagesGenerate(x *exchange) {
	raw, model, ok := x.jsonBody(imageFields, imageModel)
	if !ok {
		return
	}
	if str(raw["prompt"]) == "" {
		x.refuse("prompt is required")
		return
	}
	n := 1
	_ = json.Unmarshal(raw["n"], &n)
	u.answerImages(x, model, str(raw["prompt"]), str(raw["response_format"]), n)
}

// answerImages sends n images as b64_json or as URLs, like dall-e.
func (u *openAIUpstream) answerImages(x *exchange, model, prompt, format string, n int) {
	if n < 1 || n > 10 {
		x.refuse("n must be from 1 to 10, got %d", n)
		return
	}
	if format != "" && format != "url" && format != "b64_json" {
		x.refuse("response_format %q is not url or b64_json", format)
		return
	}
	data := make([]any, n)
	for i := range data {
		img := map[string]any{"revised_prompt": prompt}
		if format == "b64_json" {
			img["b64_json"] = fakePNG
		} else {
			img["url"] = fmt.Sprintf("https://images.example.com/fake-%d.png", i)
		}
		data[i] = img
	}
	x.served(model)
	writeJSON(x.w, http.StatusOK, map[string]any{"created": 1700000000, "data": data})
}

// uploadForm parses a multipart request, refusing unknown fields and files
// and requiring the named files; it returns the text fields.
func (x *exchange) uploadForm(fields, files []string, required ...string) (map[string]string, *multipart.Form, bool) {
	if err := x.r.ParseMultipartForm(8 << 20); err != nil {
		x.refuse("body is not multipart/form-data: %v", err)
		return nil, nil, false
	}
	form := x.r.MultipartForm
	values := map[string]string{}
	for k, v := range form.Value {
		if !slices.Contains(fields, k) || len(v) != 1 {
			x.refuse("unexpected form field %q (%d values)", k, len(v))
			return nil, nil, false
		}
		values[k] = v[0]
	}
	for k := range form.File {
		if !slices.Contains(files, k) {
			x.refuse("unexpected file field %q", k)
			return nil, nil, false
		}
	}
	for _, k := range required {
		if len(form.File[k]) != 1 {
			x.refuse("the form needs exactly one %q file", k)
			return nil, nil, false
		}
	}
	return values, form, true
}

// fileBytes reads an uploaded file with its declared content type.
func fileBytes(fh *multipart.FileHeader) ([]byte, string, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return b, fh.Header.Get("Content-Type"), err
}

// imagesEdit takes the multipart upload the SDK sends: one image as
// "image", several as "image[]" (gpt-image-1); each must arrive byte for
// byte, named and typed as a PNG.
func (u *openAIUpstream) imagesEdit(x *exchange) {
	values, form, ok := x.uploadForm(append(slices.Clone(imageFields), "input_fidelity"), []string{"image", "image[]", "mask"})
	if !ok {
		return
	}
	if values["model"] != imageModel || values["prompt"] == "" {
		x.refuse("model must be %q and prompt non-empty, got %q and %q", imageModel, values["model"], values["prompt"])
		return
	}
	images := append(slices.Clone(form.File["image"]), form.File["image[]"]...)
	if len(images) == 0 {
		x.refuse("the form has no image file")
		return
	}
	want, _ := base64.StdEncoding.DecodeString(fakePNG)
	for _, fh := range images {
		img, ctype, err := fileBytes(fh)
		if err != nil || string(img) != string(want) || ctype != "image/png" || !strings.HasSuffix(fh.Filename, ".png") {
			x.refuse("image must be the test PNG (%d bytes, image/png, *.png), got %d bytes, %q, %q", len(want), len(img), ctype, fh.Filename)
			return
		}
	}
	n := 1
	if values["n"] != "" {
		n, _ = strconv.Atoi(values["n"])
	}
	u.answerImages(x, imageModel, fmt.Sprintf("%s (%d images)", values["prompt"], len(images)), values["response_format"], n)
}

var audioFields = []string{"model", "language", "prompt", "response_format", "temperature", "timestamp_granularities[]",
	"include[]", "stream", "chunking_strategy"}

// transcribe serves transcriptions and translations: the text says how many
// bytes of which type arrived, in the format asked for.
func (u *openAIUpstream) transcribe(x *exchange) {
	values, form, ok := x.uploadForm(audioFields, []string{"file"}, "file")
	if !ok {
		return
	}
	if values["model"] != whisperModel {
		x.refuse("model %q, expected %q", values["model"], whisperModel)
		return
	}
	audio, ctype, err := fileBytes(form.File["file"][0])
	if err != nil || len(audio) < 12 || string(audio[:4]) != "RIFF" || string(audio[8:12]) != "WAVE" {
		x.refuse("file must be a WAV upload, got %d bytes", len(audio))
		return
	}
	task, verb := "transcribe", "Transcribed"
	if x.endpoint == "audio_translations" {
		task, verb = "translate", "Translated"
	}
	text := fmt.Sprintf("%s %d bytes of %s.", verb, len(audio), ctype)
	switch values["response_format"] {
	case "", "json":
		body := map[string]any{"text": text}
		if task == "transcribe" { // whisper-1 reports the billed duration
			body["usage"] = map[string]any{"type": "duration", "seconds": 3}
		}
		x.served(whisperModel)
		writeJSON(x.w, http.StatusOK, body)
	case "verbose_json":
		x.served(whisperModel)
		writeJSON(x.w, http.StatusOK, map[string]any{"task": task, "language": "english", "duration": 12.5, "text": text,
			"segments": []any{map[string]any{"id": 0, "seek": 0, "start": 0.0, "end": 12.5, "text": text, "tokens": []int{50364, 400},
				"temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01}}})
	case "text", "srt", "vtt":
		x.served(whisperModel)
		x.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(x.w, text)
	default:
		x.refuse("response_format %q is not json, text, srt, verbose_json or vtt", values["response_format"])
	}
}

// speech answers with the fake audio as audio/mpeg.
func (u *openAIUpstream) speech(x *exchange) {
	raw, model, ok := x.jsonBody([]string{"model", "input", "voice", "instructions", "response_format", "speed", "stream_format"}, ttsModel)
	if !ok {
		return
	}
	if str(raw["input"]) == "" || str(raw["voice"]) == "" {
		x.refuse("input and voice are required")
		return
	}
	x.served(model)
	x.w.Header().Set("Content-Type", "audio/mpeg")
	x.w.WriteHeader(http.StatusOK)
	audio := speechAudio()
	fl, _ := x.w.(http.Flusher)
	for len(audio) > 0 { // in pieces, as a real TTS stream arrives
		n := min(len(audio), 16<<10)
		_, _ = x.w.Write(audio[:n])
		if fl != nil {
			fl.Flush()
		}
		audio = audio[n:]
	}
}
