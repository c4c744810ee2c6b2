package compat

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
)

// fakeVector is the embedding of the i-th input: values a float32 holds
// exactly, so float and base64 answers decode to the same numbers.
func fakeVector(i int) []float64 {
	return []float64{0.25 * float64(i+1), -0.5, 0.125}
}

func float32LE(v []float64) string {
	buf := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(f)))
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// embeddingInputs reads input as the API takes it: a string or a list of
// strings (token arrays are accepted too but count as one input each).
func embeddingInputs(raw json.RawMessage) ([]string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, one != ""
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return nil, false
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = string(e)
	}
	return out, true
}

// embeddings answers in the encoding asked for (float when absent); the
// usage is the fake's own, so billing must take it from the answer.
func (u *openAIUpstream) embeddings(x *exchange) {
	raw, model, ok := x.jsonBody([]string{"model", "input", "encoding_format", "dimensions", "user"}, embedModel)
	if !ok {
		return
	}
	inputs, ok := embeddingInputs(raw["input"])
	if !ok {
		x.refuse("input must be a non-empty string or a non-empty array")
		return
	}
	format := str(raw["encoding_format"])
	if format != "" && format != "float" && format != "base64" {
		x.refuse("encoding_format %q is not float or base64", format)
		return
	}
	data := make([]any, len(inputs))
	for i := range inputs {
		var vec any = fakeVector(i)
		if format == "base64" {
			vec = float32LE(fakeVector(i))
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vec}
	}
	x.served(model)
	writeJSON(x.w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": model,
		"usage": map[string]any{"prompt_tokens": fakeInputTokens, "total_tokens": fakeInputTokens}})
}

// geminiEmbedFake serves models/{model}:batchEmbedContents like the Gemini
// API (which reports no usage) and hands everything else to chat.
func geminiEmbedFake(chat func(rc *recorder, w http.ResponseWriter, r *http.Request), model, key string) func(rc *recorder, w http.ResponseWriter, r *http.Request) {
	path := "/v1beta/models/" + model + ":batchEmbedContents"
	return func(rc *recorder, w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ":batchEmbedContents") && !strings.HasSuffix(r.URL.Path, ":embedContent") {
			chat(rc, w, r)
			return
		}
		refuse := func(msg string) {
			rc.problem(r, msg)
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": "fake gemini upstream: " + msg, "status": "INVALID_ARGUMENT"}})
		}
		switch {
		case r.Method != http.MethodPost || r.URL.Path != path:
			refuse("expected POST " + path)
			return
		case r.Header.Get("x-goog-api-key") != key && r.URL.Query().Get("key") != key:
			refuse("expected x-goog-api-key: <channel key>")
			return
		}
		texts, problem := geminiEmbedTexts(r, model)
		if problem != "" {
			refuse(problem)
			return
		}
		out := make([]any, len(texts))
		for i := range texts {
			out[i] = map[string]any{"values": fakeVector(i)}
		}
		rc.ok(model)
		rc.servedAt(model, "embeddings")
		writeJSON(w, http.StatusOK, map[string]any{"embeddings": out})
	}
}

// geminiEmbedTexts checks a batchEmbedContents body: every request names
// the model of the URL and carries text parts.
func geminiEmbedTexts(r *http.Request, model string) ([]string, string) {
	var body struct {
		Requests []struct {
			Model   string `json:"model"`
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"requests"`
	}
	raw, err := readBody(r)
	var fields map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(raw, &fields)
	}
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	switch {
	case err != nil:
		return nil, "body is not a batchEmbedContents request: " + err.Error()
	case len(unknownKeys(fields, "requests")) > 0:
		return nil, "Invalid JSON payload received. Unknown name " + strings.Join(unknownKeys(fields, "requests"), ", ")
	case len(body.Requests) == 0:
		return nil, "requests must not be empty"
	}
	var texts []string
	for _, req := range body.Requests {
		if req.Model != "models/"+model {
			return nil, "each request's model must be models/" + model + ", got " + req.Model
		}
		if len(req.Content.Parts) == 0 || req.Content.Parts[0].Text == "" {
			return nil, "each request needs content with a text part"
		}
		texts = append(texts, req.Content.Parts[0].Text)
	}
	return texts, ""
}
