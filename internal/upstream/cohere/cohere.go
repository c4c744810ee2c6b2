// Package cohere is the adapter of Cohere channels (type 34): chat on the
// v2 wire (POST /v2/chat, server-sent events when streaming), embeddings
// on POST /v2/embed, rerank on POST /v2/rerank and the model list on
// GET /v1/models, all with the key as a Bearer token.
package cohere

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	cohereproto "github.com/turnpike-gw/turnpike/internal/protocol/cohere"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Adapter reaches Cohere.
type Adapter struct{}

var (
	_ upstream.Adapter     = Adapter{}
	_ upstream.Endpoints   = Adapter{}
	_ upstream.Embedder    = Adapter{}
	_ upstream.ModelLister = Adapter{}
	_ upstream.Validator   = Adapter{}
)

// DefaultBase is Cohere's public API origin.
const DefaultBase = "https://api.cohere.com"

// maxEmbedTexts is how many texts one /v2/embed call takes.
const maxEmbedTexts = 96

// defaultInputType is what embeddings are for when settings.input_type
// does not say: documents to search, the common use of a vector store.
const defaultInputType = "search_document"

var inputTypes = map[string]bool{
	"search_document": true, "search_query": true, "classification": true, "clustering": true,
}

// Codec is the v2 chat wire.
func (Adapter) Codec(upstream.Target) protocol.UpstreamCodec { return cohereproto.V2 }

// Chat posts the body to /v2/chat; the body's stream flag asks for events.
func (Adapter) Chat(ctx context.Context, t upstream.Target, body []byte, stream bool, _ http.Header) (*http.Request, error) {
	req, err := post(ctx, t, v2URL(t, "/chat"), bytes.NewReader(body), "application/json")
	if err != nil {
		return nil, err
	}
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// Serves reports the one OpenAI-style path Cohere answers in a shape the
// gateway relays as it is: rerank. Chat and embeddings travel on Cohere's
// own wire (Chat, EmbedRequest).
func (Adapter) Serves(path string) bool { return path == "/v1/rerank" }

// Endpoint sends a rerank call to /v2/rerank. The gateway's rerank body is
// already Cohere's; documents given as objects are sent as their text, the
// only form v2 takes.
func (Adapter) Endpoint(ctx context.Context, t upstream.Target, method, path string, body io.Reader, contentType string) (*http.Request, error) {
	if path != "/v1/rerank" || method != http.MethodPost {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_channel",
			Message: "a Cohere channel has no " + path, Retry: ir.RetryNext}
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if raw, err = documentsAsText(raw); err != nil {
		return nil, err
	}
	return post(ctx, t, v2URL(t, "/rerank"), bytes.NewReader(raw), contentType)
}

// documentsAsText rewrites {"text": …} documents to plain strings; other
// objects become their compact JSON. A body whose documents are already
// strings keeps its bytes.
func documentsAsText(raw []byte) ([]byte, error) {
	docs := gjson.GetBytes(raw, "documents")
	if !docs.IsArray() {
		return raw, nil
	}
	var texts []string
	changed := false
	for _, d := range docs.Array() {
		switch {
		case d.Type == gjson.String:
			texts = append(texts, d.Str)
		case d.IsObject() && d.Get("text").Type == gjson.String:
			texts, changed = append(texts, d.Get("text").Str), true
		default:
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(d.Raw)); err != nil {
				return nil, ir.BadRequest("invalid_value", "documents: each document must be text or an object with text")
			}
			texts, changed = append(texts, buf.String()), true
		}
	}
	if !changed {
		return raw, nil
	}
	return sjson.SetBytes(raw, "documents", texts)
}

// EmbedRequest is one /v2/embed call for every text, asking for float
// vectors of the model's size, or of dims when the client asked.
func (Adapter) EmbedRequest(ctx context.Context, t upstream.Target, texts []string, dims int) (*http.Request, error) {
	if len(texts) > maxEmbedTexts {
		return nil, &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_value", Param: "input",
			Message: fmt.Sprintf("input: a Cohere channel embeds at most %d texts per call", maxEmbedTexts), Retry: ir.RetryNext}
	}
	inputType := t.Setting("input_type")
	if inputType == "" {
		inputType = defaultInputType
	}
	body := map[string]any{"model": t.Model, "texts": texts, "input_type": inputType, "embedding_types": []string{"float"}}
	if dims > 0 {
		body["output_dimension"] = dims
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return post(ctx, t, v2URL(t, "/embed"), bytes.NewReader(raw), "application/json")
}

// DecodeEmbeddings reads embeddings.float and the billed input tokens.
func (Adapter) DecodeEmbeddings(body []byte) ([][]float64, ir.Usage, error) {
	var w struct {
		Embeddings struct {
			Float [][]float64 `json:"float"`
		} `json:"embeddings"`
		Meta struct {
			BilledUnits struct {
				InputTokens float64 `json:"input_tokens"`
			} `json:"billed_units"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, ir.Usage{}, err
	}
	if w.Embeddings.Float == nil {
		return nil, ir.Usage{}, errors.New("the answer has no float embeddings")
	}
	u := ir.Usage{}
	if n := w.Meta.BilledUnits.InputTokens; n > 0 && n < 1<<40 {
		u.InputTokens = int(n)
	}
	return w.Embeddings.Float, u, nil
}

// maxModelPages bounds how many pages of the model list are read.
const maxModelPages = 50

// ListModels reads GET /v1/models, every page.
func (Adapter) ListModels(ctx context.Context, t upstream.Target) ([]string, error) {
	var out []string
	token := ""
	for range maxModelPages {
		u := versionURL(t, "/v1", "/models") + "?page_size=1000"
		if token != "" {
			u += "&page_token=" + url.QueryEscape(token)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
		if err != nil {
			return nil, err
		}
		authorize(req, t)
		body, err := upstream.Fetch(t, req)
		if err != nil {
			return nil, err
		}
		for _, v := range gjson.GetBytes(body, "models.#.name").Array() {
			if s := v.String(); s != "" {
				out = append(out, s)
			}
		}
		if token = gjson.GetBytes(body, "next_page_token").String(); token == "" {
			break
		}
	}
	return out, nil
}

// Validate refuses a channel without a usable key, or with an embedding
// input type Cohere does not know.
func (Adapter) Validate(t upstream.Target) error {
	switch {
	case t.Key == "":
		return upstream.SettingErrorf("key", "is required: give the Cohere API key")
	case strings.ContainsFunc(t.Key, unicode.IsSpace):
		return upstream.SettingErrorf("key", "must not contain spaces: give the Cohere API key alone, without a \"Bearer\" prefix")
	}
	if v, ok := t.Settings["input_type"]; ok {
		if s, _ := v.(string); !inputTypes[s] {
			return upstream.SettingErrorf("settings.input_type", "must be search_document, search_query, classification or clustering")
		}
	}
	return nil
}

func post(ctx context.Context, t upstream.Target, u string, body io.Reader, contentType string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return nil, err
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	authorize(req, t)
	return req, nil
}

// authorize sets the key and the channel's extra headers.
func authorize(req *http.Request, t upstream.Target) {
	req.Header.Set("Authorization", "Bearer "+t.Key)
	upstream.ApplyHeaders(req, t)
}

func v2URL(t upstream.Target, rest string) string { return versionURL(t, "/v2", rest) }

// versionURL is base + version + rest. settings.path_prefix replaces the
// version segment (/v2 or /v1), for a proxy that serves the API under a
// path of its own; a prefix already typed into base_url is not repeated.
func versionURL(t upstream.Target, version, rest string) string {
	base := t.Base(DefaultBase)
	prefix := t.PathPrefix(version)
	if prefix != "" && strings.HasSuffix(base, prefix) {
		return base + rest
	}
	return strings.TrimSuffix(base, "/v2") + prefix + rest
}
