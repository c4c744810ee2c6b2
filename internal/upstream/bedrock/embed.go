package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

var _ upstream.Embedder = Adapter{}

// maxCohereTexts is how many texts one Cohere embedding call takes.
const maxCohereTexts = 96

// EmbedRequest is one InvokeModel call (POST /model/{modelId}/invoke) in
// the embedding model's own body: Amazon Titan Text Embeddings take one
// text per call ({"inputText"}; v2 also "dimensions"), Cohere Embed takes
// up to 96 ({"texts", "input_type"}; v4 also "output_dimension"). What the
// model cannot do is a 400 naming the field.
func (a Adapter) EmbedRequest(ctx context.Context, t upstream.Target, texts []string, dims int) (*http.Request, error) {
	region := t.Setting("region")
	if !regionPattern.MatchString(region) {
		return nil, errNoRegion
	}
	body, err := embedBody(strings.ToLower(t.Model), texts, dims)
	if err != nil {
		return nil, err
	}
	u := RuntimeBase(t, region) + t.PathPrefix("") + "/model/" + EscapeModel(t.Model) + "/invoke"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	upstream.ApplyHeaders(req, t)
	if err := a.authorize(ctx, req, t, region, body); err != nil {
		return nil, err
	}
	return req, nil
}

func embedBody(model string, texts []string, dims int) ([]byte, error) {
	switch {
	case strings.Contains(model, "titan-embed") && strings.Contains(model, "image"):
		return nil, embedRefusal("model", "multimodal Titan embeddings are not supported on this gateway's embeddings endpoint")
	case strings.Contains(model, "titan-embed"):
		if len(texts) != 1 {
			return nil, embedRefusal("input", "Amazon Titan embedding models on Amazon Bedrock take one text per request")
		}
		b := map[string]any{"inputText": texts[0]}
		if dims > 0 {
			if !strings.Contains(model, "v2") {
				return nil, embedRefusal("dimensions", "this Amazon Titan embedding model has a fixed size")
			}
			b["dimensions"] = dims
		}
		return json.Marshal(b)
	case strings.Contains(model, "cohere.embed"):
		if len(texts) > maxCohereTexts {
			return nil, embedRefusal("input", "Cohere embedding models on Amazon Bedrock take at most 96 texts per request")
		}
		b := map[string]any{"texts": texts, "input_type": "search_document"}
		if dims > 0 {
			if !strings.Contains(model, "v4") {
				return nil, embedRefusal("dimensions", "this Cohere embedding model has a fixed size")
			}
			b["output_dimension"] = dims
		}
		return json.Marshal(b)
	}
	return nil, embedRefusal("model", "only Amazon Titan Text Embeddings and Cohere Embed models are supported for embeddings on Amazon Bedrock")
}

func embedRefusal(param, msg string) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "unsupported_parameter", Param: param, Message: param + ": " + msg}
}

// DecodeEmbeddings reads a Titan answer ({"embedding", "inputTextTokenCount"})
// or a Cohere one ({"embeddings": [[…]]} or {"embeddings": {"float": [[…]]}},
// without usage, which the gateway then counts).
func (Adapter) DecodeEmbeddings(body []byte) ([][]float64, ir.Usage, error) {
	if !gjson.ValidBytes(body) {
		return nil, ir.Usage{}, errors.New("embedding answer is not JSON")
	}
	root := gjson.ParseBytes(body)
	if e := root.Get("embedding"); e.IsArray() {
		v, err := vector(e)
		if err != nil {
			return nil, ir.Usage{}, err
		}
		n := max(int(min(root.Get("inputTextTokenCount").Int(), 1<<40)), 0)
		return [][]float64{v}, ir.Usage{InputTokens: n}, nil
	}
	list := root.Get("embeddings")
	if list.IsObject() {
		list = list.Get("float")
	}
	if !list.IsArray() {
		return nil, ir.Usage{}, errors.New("embedding answer has no embeddings")
	}
	var out [][]float64
	for _, e := range list.Array() {
		v, err := vector(e)
		if err != nil {
			return nil, ir.Usage{}, err
		}
		out = append(out, v)
	}
	return out, ir.Usage{}, nil
}

func vector(e gjson.Result) ([]float64, error) {
	if !e.IsArray() {
		return nil, errors.New("an embedding is not an array")
	}
	arr := e.Array()
	v := make([]float64, 0, len(arr))
	for _, x := range arr {
		if x.Type != gjson.Number {
			return nil, errors.New("an embedding holds a non-number")
		}
		v = append(v, x.Num)
	}
	return v, nil
}
