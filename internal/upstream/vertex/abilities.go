package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Validate refuses a key that is neither a usable service-account JSON
// key nor an API key, a region that cannot be a Google Cloud location, and
// a service account without a project. Task plugins that declare type 41
// (Veo on Vertex AI) take the same service-account key, so their channels
// pass too.
func (Adapter) Validate(t upstream.Target) error {
	cred, err := parseKey(t.Key)
	if err != nil {
		return err
	}
	if v, ok := t.Settings["region"]; ok && v != nil {
		s, isString := v.(string)
		s = strings.TrimSpace(s)
		if !isString || (s != "" && !validRegion(s)) {
			return upstream.SettingErrorf("settings.region", "must be a Google Cloud location such as us-central1, europe-west4 or global")
		}
	}
	project, hasProject := t.Settings["project"]
	if hasProject && project != nil {
		s, isString := project.(string)
		if !isString || strings.ContainsAny(s, "/?# \t\r\n") {
			return upstream.SettingErrorf("settings.project", "must be a Google Cloud project ID such as my-project-123")
		}
	}
	if cred.account != nil && strings.TrimSpace(t.Setting("project")) == "" && strings.TrimSpace(cred.account.ProjectID) == "" {
		return upstream.SettingErrorf("settings.project", "is required: the service account JSON has no project_id, so give the Google Cloud project ID")
	}
	return nil
}

// EmbedRequest asks a Google embedding model's :predict for one vector per
// text, of dims values when dims > 0. Express mode has no :predict.
func (Adapter) EmbedRequest(ctx context.Context, t upstream.Target, texts []string, dims int) (*http.Request, error) {
	type instance struct {
		Content string `json:"content"`
	}
	body := struct {
		Instances  []instance      `json:"instances"`
		Parameters *map[string]int `json:"parameters,omitempty"`
	}{Instances: make([]instance, len(texts))}
	for i, s := range texts {
		body.Instances[i].Content = s
	}
	if dims > 0 {
		body.Parameters = &map[string]int{"outputDimensionality": dims}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(strings.TrimSpace(t.Key), "{") {
		return nil, errors.New("vertex: embeddings need a service account key; express mode has no :predict")
	}
	return call(ctx, t, "google", gemini.StripModelPrefix(t.Model), "predict", b)
}

// DecodeEmbeddings reads predictions[].embeddings.values in order, and the
// input tokens as the sum of each prediction's statistics.token_count.
func (Adapter) DecodeEmbeddings(body []byte) ([][]float64, ir.Usage, error) {
	var w struct {
		Predictions []struct {
			Embeddings *struct {
				Values     []float64 `json:"values"`
				Statistics struct {
					TokenCount float64 `json:"token_count"`
				} `json:"statistics"`
			} `json:"embeddings"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, ir.Usage{}, errors.New("vertex: the embedding answer is not JSON of the predict shape")
	}
	if len(w.Predictions) == 0 {
		return nil, ir.Usage{}, errors.New("vertex: the embedding answer has no predictions")
	}
	vecs := make([][]float64, len(w.Predictions))
	var tokens float64
	for i, p := range w.Predictions {
		if p.Embeddings == nil || len(p.Embeddings.Values) == 0 {
			return nil, ir.Usage{}, errors.New("vertex: a prediction of the embedding answer has no values")
		}
		vecs[i] = p.Embeddings.Values
		if c := p.Embeddings.Statistics.TokenCount; c > 0 && c < 1<<31 {
			tokens += c
		}
	}
	return vecs, ir.Usage{InputTokens: int(tokens)}, nil
}

// CountTokens asks Vertex AI's count-tokens endpoint for a Claude model:
// the messages body with its model (which this endpoint reads from the
// body) and Vertex AI's anthropic_version. Other models are counted by the
// gateway.
func (Adapter) CountTokens(ctx context.Context, t upstream.Target, body []byte, in http.Header) (*http.Request, error) {
	if !isClaude(t.Model) {
		return nil, errors.New("vertex: token counting on Vertex AI is for Claude models")
	}
	b, err := sjson.SetBytes(body, "model", t.Model)
	if err == nil {
		b, err = sjson.SetBytes(b, "anthropic_version", anthropicVersion)
	}
	if err != nil {
		return nil, errors.New("vertex: the messages body is not a JSON object")
	}
	req, err := call(ctx, t, "anthropic", "count-tokens", "rawPredict", b)
	if err != nil {
		return nil, err
	}
	keepBeta(req, in)
	return req, nil
}

// errNoModelList is the answer to model discovery. Vertex AI lists Model
// Garden's whole catalogue (v1beta1 publishers/*/models), not what a
// project can call: many of those models must first be deployed to an
// endpoint, and partner models must be enabled per project.
var errNoModelList = errors.New("Vertex AI has no model list for a project; enter the model names (such as gemini-2.5-flash or claude-sonnet-4@20250514)")

// ListModels says Vertex AI has no list to offer.
func (Adapter) ListModels(context.Context, upstream.Target) ([]string, error) {
	return nil, errNoModelList
}
