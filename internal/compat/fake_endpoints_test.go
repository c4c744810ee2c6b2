package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Models of the OpenAI-style endpoints other than chat. Each endpoint has a
// model of its own, so the billing check can price every consume row by the
// rules of that endpoint. The Node tests read them as TURNPIKE_MODEL_<NAME>.
const (
	instructModel     = "up-openai-instruct"
	embedModel        = "up-openai-embed"
	geminiEmbedModel  = "up-gemini-embed"
	imageModel        = "up-openai-image"
	whisperModel      = "up-openai-whisper"
	ttsModel          = "up-openai-tts"
	moderationModel   = "up-openai-moderation"
	defaultModeration = "omni-moderation-latest" // the gateway's default moderation model
	rerankModel       = "up-openai-rerank"
	searchModel       = "up-openai-search"
	realtimeModel     = "up-openai-realtime"
	// batchModel is served by an Anthropic-type channel, whose lines the
	// gateway runs itself.
	batchModel = "up-batch"
)

// endpointModelEnv names each endpoint model for the Node tests.
var endpointModelEnv = map[string]string{
	"COMPLETIONS": instructModel, "EMBEDDINGS": embedModel, "GEMINI_EMBEDDINGS": geminiEmbedModel,
	"IMAGES": imageModel, "TRANSCRIPTIONS": whisperModel, "SPEECH": ttsModel, "MODERATIONS": moderationModel,
	"DEFAULT_MODERATIONS": defaultModeration, "RERANK": rerankModel, "SEARCH": searchModel, "REALTIME": realtimeModel,
	"BATCH": batchModel,
}

// openAIEndpointModels are served by the OpenAI-type channel besides its
// chat model; the search model has a channel of its own that supports search.
var openAIEndpointModels = []string{instructModel, embedModel, imageModel, whisperModel, ttsModel,
	moderationModel, defaultModeration, rerankModel, realtimeModel}

// openAIUpstream is the OpenAI fake: chat through the chat dialect, every
// other endpoint through its own checking handler, and the responses it
// stored for later retrieval.
type openAIUpstream struct {
	chat      func(rc *recorder, w http.ResponseWriter, r *http.Request)
	chatModel string
	key       string
	mu        sync.Mutex
	stored    map[string][]byte
	seq       int
}

// exchange is one request to an endpoint handler of a fake.
type exchange struct {
	rc       *recorder
	w        http.ResponseWriter
	r        *http.Request
	endpoint string // the gateway's name for the endpoint, as in other.endpoint
}

// refuse records a request a real provider would refuse and answers 400.
func (x *exchange) refuse(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	x.rc.problem(x.r, msg)
	writeJSON(x.w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "fake openai upstream: "+msg))
}

// served counts a billable answer under its model and endpoint.
func (x *exchange) served(model string) {
	x.rc.ok(model)
	x.rc.servedAt(model, x.endpoint)
}

func openAIError(status int, msg string) map[string]any {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
}

type endpointRoute struct {
	endpoint string
	handle   func(u *openAIUpstream, x *exchange)
}

// openAIRoutes maps "METHOD path" to the handler; anything else goes to
// the chat handler, which refuses paths it does not serve.
var openAIRoutes = map[string]endpointRoute{
	"POST /v1/completions":          {"completions", (*openAIUpstream).completions},
	"POST /v1/embeddings":           {"embeddings", (*openAIUpstream).embeddings},
	"POST /v1/images/generations":   {"images_generations", (*openAIUpstream).imagesGenerate},
	"POST /v1/images/edits":         {"images_edits", (*openAIUpstream).imagesEdit},
	"POST /v1/audio/transcriptions": {"audio_transcriptions", (*openAIUpstream).transcribe},
	"POST /v1/audio/translations":   {"audio_translations", (*openAIUpstream).transcribe},
	"POST /v1/audio/speech":         {"audio_speech", (*openAIUpstream).speech},
	"POST /v1/moderations":          {"moderations", (*openAIUpstream).moderations},
	"POST /v1/rerank":               {"rerank", (*openAIUpstream).rerank},
	"POST /v1/alpha/search":         {"search", (*openAIUpstream).search},
	"POST /v1/responses":            {"responses", (*openAIUpstream).responsesCreate},
	"POST /v1/responses/compact":    {"responses_compact", (*openAIUpstream).responsesCompact},
	"GET /v1/realtime":              {"realtime", (*openAIUpstream).realtime},
}

func openAIUpstreamFake(chatModel, key string) func(rc *recorder, w http.ResponseWriter, r *http.Request) {
	u := &openAIUpstream{chat: openAIFake(chatModel, key), chatModel: chatModel, key: key, stored: map[string][]byte{}}
	return u.serve
}

func (u *openAIUpstream) serve(rc *recorder, w http.ResponseWriter, r *http.Request) {
	route, ok := openAIRoutes[r.Method+" "+r.URL.Path]
	if !ok && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/responses/") {
		route, ok = endpointRoute{"responses_retrieve", (*openAIUpstream).responsesRetrieve}, true
	}
	if !ok {
		u.chat(rc, w, r)
		return
	}
	x := &exchange{rc: rc, w: w, r: r, endpoint: route.endpoint}
	if got := r.Header.Get("Authorization"); got != "Bearer "+u.key {
		x.refuse("expected Authorization: Bearer <channel key>, got %q", redact(got))
		return
	}
	route.handle(u, x)
}

// jsonBody reads a JSON object, refusing fields the real API does not know
// and a model other than the expected ones; it returns the fields and the
// model, or ok false after refusing.
func (x *exchange) jsonBody(fields []string, models ...string) (map[string]json.RawMessage, string, bool) {
	body, err := readBody(x.r)
	var raw map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(body, &raw)
	}
	if err != nil {
		x.refuse("body is not a JSON object: %v", err)
		return nil, "", false
	}
	if bad := unknownKeys(raw, fields...); len(bad) > 0 {
		x.refuse("unrecognized request arguments %s", strings.Join(bad, ", "))
		return nil, "", false
	}
	var model string
	_ = json.Unmarshal(raw["model"], &model)
	if !slices.Contains(models, model) {
		x.refuse("model %q, expected one of %q", model, models)
		return nil, "", false
	}
	return raw, model, true
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

var completionsFields = []string{"model", "prompt", "best_of", "echo", "frequency_penalty", "logit_bias", "logprobs",
	"max_tokens", "n", "presence_penalty", "seed", "stop", "stream", "stream_options", "suffix", "temperature", "top_p", "user"}

// completionText is what the fake completes every prompt with.
const completionText = "Hello from the openai completions upstream."

// completions answers a legacy completion; a stream carries the usage chunk
// only when stream_options.include_usage asks for it, as the API does.
func (u *openAIUpstream) completions(x *exchange) {
	raw, model, ok := x.jsonBody(completionsFields, instructModel)
	if !ok {
		return
	}
	prompt := stringOrList(raw["prompt"])
	if len(prompt) == 0 || prompt[0] == "" {
		x.refuse("prompt must be a non-empty string or list of strings")
		return
	}
	if strings.Contains(strings.ToLower(prompt[0]), "server error") {
		writeJSON(x.w, http.StatusInternalServerError, openAIError(500, "fake openai upstream: a server error, as asked"))
		return
	}
	x.served(model)
	var stream bool
	_ = json.Unmarshal(raw["stream"], &stream)
	if !stream {
		writeJSON(x.w, http.StatusOK, map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1700000000,
			"model": model, "choices": []any{completionChoice(completionText, "stop")}, "usage": openAIUsage()})
		return
	}
	var opts struct {
		IncludeUsage bool `json:"include_usage"`
	}
	_ = json.Unmarshal(raw["stream_options"], &opts)
	s := newSSE(x.w)
	chunk := func(choices []any) map[string]any {
		return map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1700000000, "model": model, "choices": choices}
	}
	for _, p := range pieces(completionText) {
		s.send("", chunk([]any{completionChoice(p, nil)}))
	}
	s.send("", chunk([]any{completionChoice("", "stop")}))
	if opts.IncludeUsage {
		c := chunk([]any{})
		c["usage"] = openAIUsage()
		s.send("", c)
	}
	s.send("", "[DONE]")
}

func completionChoice(text string, finish any) map[string]any {
	return map[string]any{"text": text, "index": 0, "logprobs": nil, "finish_reason": finish}
}
