package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// OpenAICompatible is a provider that speaks the OpenAI API under a path
// prefix of its own: OpenAI itself, self-hosted servers and the hosted
// presets (CONTRACT §9) whose public address and prefix it knows.
type OpenAICompatible struct {
	// DefaultBase is the provider's public origin; empty when every channel
	// must give its own address.
	DefaultBase string
	// Prefix replaces /v1 in OpenAI paths ("/api/v3" for VolcEngine Ark).
	Prefix string
	// Only, when set, limits the OpenAI-style endpoints the provider has
	// (besides chat); nil means all.
	Only []string
	// Batches: the provider runs OpenAI-form batches without
	// settings.batches saying so (OpenAI itself).
	Batches bool
}

var (
	_ Adapter     = OpenAICompatible{}
	_ Endpoints   = OpenAICompatible{}
	_ Validator   = OpenAICompatible{}
	_ ModelLister = OpenAICompatible{}
	_ Batches     = OpenAICompatible{}
)

// Codec is the OpenAI chat wire.
func (OpenAICompatible) Codec(Target) protocol.UpstreamCodec { return openai.Chat }

// Chat posts to {prefix}/chat/completions.
func (a OpenAICompatible) Chat(ctx context.Context, t Target, body []byte, stream bool, _ http.Header) (*http.Request, error) {
	// No content type for Endpoint to set: newJSONRequest sets it, after
	// the channel's headers, and each Set is an allocation.
	req, err := a.Endpoint(ctx, t, http.MethodPost, "/v1/chat/completions", bytes.NewReader(body), "")
	if err != nil {
		return nil, err
	}
	return newJSONRequest(req, stream), nil
}

// Serves reports the endpoints of the provider.
func (a OpenAICompatible) Serves(path string) bool {
	if a.Only == nil {
		return true
	}
	for _, p := range a.Only {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Endpoint builds a request for an OpenAI path with a Bearer key.
func (a OpenAICompatible) Endpoint(ctx context.Context, t Target, method, path string, body io.Reader, contentType string) (*http.Request, error) {
	u := JoinPrefix(t.Base(a.DefaultBase), t.PathPrefix(a.Prefix), path)
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if t.Key != "" {
		req.Header.Set("Authorization", "Bearer "+t.Key)
	}
	ApplyHeaders(req, t)
	return req, nil
}

// Validate needs an address when the provider has no public one.
func (a OpenAICompatible) Validate(t Target) error {
	if a.DefaultBase == "" && NormalizeBaseURL(t.BaseURL) == "" {
		return settingError("base_url", "is required for this channel type: give the server's origin, such as http://127.0.0.1:8000")
	}
	return nil
}

// ListModels reads GET {prefix}/models.
func (a OpenAICompatible) ListModels(ctx context.Context, t Target) ([]string, error) {
	req, err := a.Endpoint(ctx, t, http.MethodGet, "/v1/models", http.NoBody, "")
	if err != nil {
		return nil, err
	}
	return listIDs(t, req, "data.#.id")
}

// listIDs sends a model-list request and reads the names at path.
func listIDs(t Target, req *http.Request, path string) ([]string, error) {
	body, err := fetch(t, req)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range gjson.GetBytes(body, path).Array() {
		if s := v.String(); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}
