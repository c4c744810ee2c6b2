package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// Azure is Azure OpenAI (CONTRACT §9): per-deployment paths with an
// api-version query, or with settings.api_version "v1" the /openai/v1/
// paths that take the deployment as the body's model; the resource key
// travels in the api-key header.
type Azure struct{}

var (
	_ Adapter     = Azure{}
	_ Endpoints   = Azure{}
	_ Validator   = Azure{}
	_ ModelLister = Azure{}
	_ ModelNamer  = Azure{}
	_ Batches     = Azure{}
)

// azureDefaultVersion is the newest generally available data-plane version.
const azureDefaultVersion = "2024-10-21"

// Codec is the OpenAI chat wire.
func (Azure) Codec(Target) protocol.UpstreamCodec { return openai.Chat }

// UpstreamModel is the deployment serving the model: settings.deployments
// when it names one, else the (mapped) model name.
func (Azure) UpstreamModel(t Target) string {
	if m, ok := t.Settings["deployments"].(map[string]any); ok {
		if d, ok := m[t.Model].(string); ok && d != "" {
			return d
		}
	}
	return t.Model
}

// Chat posts to the deployment's chat/completions.
func (a Azure) Chat(ctx context.Context, t Target, body []byte, stream bool, _ http.Header) (*http.Request, error) {
	req, err := a.Endpoint(ctx, t, http.MethodPost, "/v1/chat/completions", bytes.NewReader(body), "application/json")
	if err != nil {
		return nil, err
	}
	return newJSONRequest(req, stream), nil
}

// Serves is what Azure OpenAI has: chat, completions, embeddings, images,
// audio and responses.
func (Azure) Serves(path string) bool {
	for _, p := range []string{"/v1/chat/", "/v1/completions", "/v1/embeddings", "/v1/images/", "/v1/audio/", "/v1/responses", "/v1/models"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Endpoint maps an OpenAI path to Azure's layout.
func (Azure) Endpoint(ctx context.Context, t Target, method, path string, body io.Reader, contentType string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, azureURL(t, path), body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("api-key", t.Key)
	ApplyHeaders(req, t)
	return req, nil
}

// azureURL places an OpenAI path: under /openai/v1 in the v1 form; else
// under the deployment, except the account-wide resources (responses,
// models, files, batches), with the api-version query appended to any the
// path has.
func azureURL(t Target, path string) string {
	base := t.Base("")
	path, query, _ := strings.Cut(path, "?")
	rest := strings.TrimPrefix(path, "/v1")
	ver := t.Setting("api_version")
	if ver == "" {
		ver = azureDefaultVersion
	}
	if ver == "v1" {
		return withQuery(base+"/openai/v1"+rest, query)
	}
	var u string
	if accountWide(rest) {
		u = base + "/openai" + rest
	} else {
		u = base + "/openai/deployments/" + url.PathEscape(t.Model) + rest
	}
	if query != "" {
		query += "&"
	}
	return u + "?" + query + "api-version=" + url.QueryEscape(ver)
}

// accountWide reports a path of the resource rather than of a deployment.
func accountWide(rest string) bool {
	for _, p := range []string{"/responses", "/models", "/files", "/batches"} {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

func withQuery(u, q string) string {
	if q == "" {
		return u
	}
	return u + "?" + q
}

// Validate needs the resource's address and well-formed deployments.
func (Azure) Validate(t Target) error {
	if NormalizeBaseURL(t.BaseURL) == "" {
		return settingError("base_url", "is required for Azure OpenAI: give the resource endpoint, such as https://my-resource.openai.azure.com")
	}
	if d, ok := t.Settings["deployments"]; ok {
		m, ok := d.(map[string]any)
		if !ok {
			return settingError("settings.deployments", "must map model names to deployment names")
		}
		for k, v := range m {
			if s, ok := v.(string); !ok || s == "" {
				return settingError("settings.deployments."+k, "must be a deployment name")
			}
		}
	}
	if v, ok := t.Settings["api_version"]; ok {
		if s, ok := v.(string); !ok || s == "" {
			return settingError("settings.api_version", "must be a version such as 2024-10-21, or v1")
		}
	}
	return nil
}

// ListModels reads the resource's models.
func (a Azure) ListModels(ctx context.Context, t Target) ([]string, error) {
	req, err := a.Endpoint(ctx, t, http.MethodGet, "/v1/models", http.NoBody, "")
	if err != nil {
		return nil, err
	}
	return listIDs(t, req, "data.#.id")
}
