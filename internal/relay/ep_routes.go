package relay

import "net/http"

// registerEndpoints mounts the OpenAI-style surfaces other than chat, and
// the alternate-native embedding actions.
func (rl *Relay) registerEndpoints(mux *http.ServeMux) {
	fromPath := func(r *http.Request) string { return r.PathValue("model") }
	embeddings := embeddingsEndpoint()
	imageEdit := imagesEndpoint("images_edits", "/v1/images/edits", true)
	routes := []struct {
		pattern string
		h       http.HandlerFunc
	}{
		{"POST /v1/completions", rl.endpointHandler(completionsEndpoint(), nil)},
		{"POST /v1/embeddings", rl.endpointHandler(embeddings, nil)},
		{"POST /v1/engines/{model}/embeddings", rl.endpointHandler(embeddings, fromPath)},
		{"POST /v1/images/generations", rl.endpointHandler(imagesEndpoint("images_generations", "/v1/images/generations", false), nil)},
		{"POST /v1/images/edits", rl.endpointHandler(imageEdit, nil)},
		// The legacy edits endpoint is reserved and served as image editing.
		{"POST /v1/edits", rl.endpointHandler(imageEdit, nil)},
		{"POST /v1/audio/transcriptions", rl.endpointHandler(audioTextEndpoint("audio_transcriptions", "/v1/audio/transcriptions"), nil)},
		{"POST /v1/audio/translations", rl.endpointHandler(audioTextEndpoint("audio_translations", "/v1/audio/translations"), nil)},
		{"POST /v1/audio/speech", rl.endpointHandler(speechEndpoint(), nil)},
		{"POST /v1/rerank", rl.endpointHandler(rerankEndpoint(), nil)},
		{"POST /v1/moderations", rl.endpointHandler(moderationsEndpoint(), nil)},
		{"POST /v1/alpha/search", rl.endpointHandler(searchEndpoint(), nil)},
	}
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, rt.h)
	}
	for _, action := range []string{"embedContent", "batchEmbedContents"} {
		ep := altEmbedEndpoint(action)
		rl.HandleAltAction(action, func(w http.ResponseWriter, r *http.Request, model string) {
			rl.endpointHandler(ep, func(*http.Request) string { return model })(w, r)
		})
	}
}
