package upstream

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
)

// ModelNamer is an adapter whose provider names a model differently from
// the gateway's mapped name (Azure's deployments); the relay asks it once
// per attempt and uses the answer in the URL and body.
type ModelNamer interface {
	UpstreamModel(t Target) string
}

// Anthropic is the messages-native provider.
type Anthropic struct{}

var (
	_ Adapter      = Anthropic{}
	_ TokenCounter = Anthropic{}
	_ ModelLister  = Anthropic{}
)

const anthropicBase = "https://api.anthropic.com"

// Codec is the messages wire.
func (Anthropic) Codec(Target) protocol.UpstreamCodec { return anthropic.Messages }

// Chat posts to /v1/messages, keeping the client's version and beta flags.
func (a Anthropic) Chat(ctx context.Context, t Target, body []byte, stream bool, in http.Header) (*http.Request, error) {
	return a.post(ctx, t, "/v1/messages", body, stream, in)
}

// CountTokens posts to /v1/messages/count_tokens.
func (a Anthropic) CountTokens(ctx context.Context, t Target, body []byte, in http.Header) (*http.Request, error) {
	return a.post(ctx, t, "/v1/messages/count_tokens", body, false, in)
}

func (Anthropic) post(ctx context.Context, t Target, path string, body []byte, stream bool, in http.Header) (*http.Request, error) {
	u := JoinPrefix(t.Base(anthropicBase), t.PathPrefix("/v1"), path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	anthropicHeaders(req.Header, t.Key, in)
	ApplyHeaders(req, t)
	return newJSONRequest(req, stream), nil
}

func anthropicHeaders(h http.Header, key string, in http.Header) {
	h.Set("x-api-key", key)
	v := in.Get("anthropic-version")
	if v == "" {
		v = in.Get("provider-version")
	}
	if v == "" {
		v = "2023-06-01"
	}
	h.Set("anthropic-version", v)
	if b := in.Get("anthropic-beta"); b != "" {
		h.Set("anthropic-beta", b)
	}
}

// ListModels reads GET /v1/models.
func (Anthropic) ListModels(ctx context.Context, t Target) ([]string, error) {
	u := JoinPrefix(t.Base(anthropicBase), t.PathPrefix("/v1"), "/v1/models?limit=1000")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	anthropicHeaders(req.Header, t.Key, nil)
	ApplyHeaders(req, t)
	return listIDs(t, req, "data.#.id")
}

// Gemini is the alternate-native provider (the Gemini API).
type Gemini struct{}

var (
	_ Adapter     = Gemini{}
	_ Embedder    = Gemini{}
	_ ModelLister = Gemini{}
)

const geminiBase = "https://generativelanguage.googleapis.com"

// Codec is the generateContent wire.
func (Gemini) Codec(Target) protocol.UpstreamCodec { return gemini.Generate }

// Chat posts to :generateContent, or :streamGenerateContent as SSE.
func (g Gemini) Chat(ctx context.Context, t Target, body []byte, stream bool, _ http.Header) (*http.Request, error) {
	action := "generateContent"
	if stream {
		action = "streamGenerateContent?alt=sse"
	}
	req, err := g.Action(ctx, t, action, body)
	if err != nil {
		return nil, err
	}
	return newJSONRequest(req, stream), nil
}

// Action builds a POST of the model's action (generateContent,
// batchEmbedContents, countTokens) with body as it is.
func (Gemini) Action(ctx context.Context, t Target, action string, body []byte) (*http.Request, error) {
	return geminiCall(ctx, t, http.MethodPost, action, body)
}

func geminiCall(ctx context.Context, t Target, method, action string, body []byte) (*http.Request, error) {
	u := t.Base(geminiBase) + t.PathPrefix("/v1beta") + "/models/" + url.PathEscape(gemini.StripModelPrefix(t.Model)) + ":" + action
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", t.Key)
	ApplyHeaders(req, t)
	return req, nil
}

// EmbedRequest is one batchEmbedContents call for every text.
func (g Gemini) EmbedRequest(ctx context.Context, t Target, texts []string, dims int) (*http.Request, error) {
	return g.Action(ctx, t, "batchEmbedContents", gemini.Generate.EncodeEmbedRequest(t.Model, texts, dims))
}

// DecodeEmbeddings reads the vectors; the Gemini API reports no usage.
func (Gemini) DecodeEmbeddings(body []byte) ([][]float64, ir.Usage, error) {
	v, err := gemini.Generate.DecodeEmbedResponse(body)
	return v, ir.Usage{}, err
}

// ListModels reads GET /v1beta/models, every page.
func (Gemini) ListModels(ctx context.Context, t Target) ([]string, error) {
	var out []string
	token := ""
	for page := 0; page < 50; page++ {
		u := t.Base(geminiBase) + t.PathPrefix("/v1beta") + "/models?pageSize=1000"
		if token != "" {
			u += "&pageToken=" + url.QueryEscape(token)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
		if err != nil {
			return nil, err
		}
		req.Header.Set("x-goog-api-key", t.Key)
		ApplyHeaders(req, t)
		body, err := fetch(t, req)
		if err != nil {
			return nil, err
		}
		for _, v := range gjson.GetBytes(body, "models.#.name").Array() {
			out = append(out, strings.TrimPrefix(v.String(), "models/"))
		}
		if token = gjson.GetBytes(body, "nextPageToken").String(); token == "" {
			break
		}
	}
	return out, nil
}
