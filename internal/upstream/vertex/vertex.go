// Package vertex reaches Google Vertex AI (channel type vertex = 41):
// Gemini models on the generateContent wire and Anthropic's Claude models
// on the messages wire through rawPredict, authenticated by a service
// account (a signed JWT exchanged for an access token) or by an
// express-mode API key.
package vertex

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Adapter is the Vertex AI provider.
type Adapter struct{}

var (
	_ upstream.Adapter      = Adapter{}
	_ upstream.Validator    = Adapter{}
	_ upstream.Embedder     = Adapter{}
	_ upstream.TokenCounter = Adapter{}
	_ upstream.ModelLister  = Adapter{}
)

const (
	// anthropicVersion is the messages-wire version Vertex AI takes in the
	// body of a Claude call, in place of the anthropic-version header.
	anthropicVersion = "vertex-2023-10-16"
	// defaultRegion is the location of a channel that sets none.
	defaultRegion = "global"
	// globalHost serves the global location and express mode.
	globalHost = "https://aiplatform.googleapis.com"
)

// regionPattern is a Google Cloud location as it may appear in a host
// name: "global", "us-central1", "europe-west4", "us".
var regionPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// validRegion reports a location that can stand in a host name.
func validRegion(r string) bool { return len(r) <= 63 && regionPattern.MatchString(r) }

// isClaude reports a model Vertex AI serves from Anthropic.
func isClaude(model string) bool {
	return strings.HasPrefix(strings.ToLower(model), "claude")
}

// Codec is the messages wire for Claude models and the generateContent
// wire for every other model.
func (Adapter) Codec(t upstream.Target) protocol.UpstreamCodec {
	if isClaude(t.Model) {
		return anthropic.Messages
	}
	return gemini.Generate
}

// Chat posts a Gemini model's body to :generateContent (or
// :streamGenerateContent as server-sent events), and a Claude model's
// messages body, without its model and with Vertex AI's anthropic_version,
// to :rawPredict (or :streamRawPredict).
func (Adapter) Chat(ctx context.Context, t upstream.Target, body []byte, stream bool, in http.Header) (*http.Request, error) {
	if isClaude(t.Model) {
		b, err := claudeBody(body, stream)
		if err != nil {
			return nil, err
		}
		action := "rawPredict"
		if stream {
			action = "streamRawPredict"
		}
		req, err := call(ctx, t, "anthropic", t.Model, action, b)
		if err != nil {
			return nil, err
		}
		keepBeta(req, in)
		return withStreamAccept(req, stream), nil
	}
	action := "generateContent"
	if stream {
		action = "streamGenerateContent?alt=sse"
	}
	req, err := call(ctx, t, "google", gemini.StripModelPrefix(t.Model), action, body)
	if err != nil {
		return nil, err
	}
	return withStreamAccept(req, stream), nil
}

// claudeBody is a messages body as rawPredict takes it: the model is in
// the URL, the version in the body, and stream says which action it is.
func claudeBody(body []byte, stream bool) ([]byte, error) {
	b, err := sjson.DeleteBytes(body, "model")
	if err == nil {
		b, err = sjson.SetBytes(b, "anthropic_version", anthropicVersion)
	}
	if err == nil {
		if stream {
			b, err = sjson.SetBytes(b, "stream", true)
		} else {
			b, err = sjson.DeleteBytes(b, "stream")
		}
	}
	if err != nil {
		return nil, errors.New("vertex: the messages body is not a JSON object")
	}
	return b, nil
}

// keepBeta passes the client's anthropic-beta flags on.
func keepBeta(req *http.Request, in http.Header) {
	if b := in.Get("anthropic-beta"); b != "" {
		req.Header.Set("anthropic-beta", b)
	}
}

// withStreamAccept asks a stream for server-sent events.
func withStreamAccept(req *http.Request, stream bool) *http.Request {
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req
}

// endpoint is where a channel's calls go and how they are authenticated.
type endpoint struct {
	// prefix is the address up to the publishers' models:
	// {base}/v1/projects/{project}/locations/{region} with a service
	// account, {base}/v1 in express mode.
	prefix string
	// auth sets the credentials on a request.
	auth    func(*http.Request)
	express bool
}

// resolve reads the channel's key and settings into the address and
// credentials of its calls; with a service account it gets an access
// token, from the cache when a valid one is there.
func resolve(ctx context.Context, t upstream.Target) (endpoint, error) {
	region, err := regionOf(t)
	if err != nil {
		return endpoint{}, err
	}
	version := t.PathPrefix("/v1")
	key := strings.TrimSpace(t.Key)
	if !strings.HasPrefix(key, "{") {
		cred, err := parseKey(key)
		if err != nil {
			return endpoint{}, err
		}
		return endpoint{
			prefix:  upstream.JoinPrefix(t.Base(globalHost), version, "/v1"),
			auth:    func(r *http.Request) { r.Header.Set("x-goog-api-key", cred.apiKey) },
			express: true,
		}, nil
	}
	a, err := accounts.get(key, t.HTTP())
	if err != nil {
		return endpoint{}, err
	}
	project := strings.TrimSpace(t.Setting("project"))
	if project == "" {
		project = a.project
	}
	if project == "" {
		return endpoint{}, errors.New("vertex: no project: the service account JSON has no project_id and settings.project is empty")
	}
	tok, err := a.token(ctx)
	if err != nil {
		return endpoint{}, err
	}
	base := t.Base(regionalHost(region))
	return endpoint{
		prefix: upstream.JoinPrefix(base, version, "/v1/projects/"+url.PathEscape(project)+"/locations/"+url.PathEscape(region)),
		auth:   func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) },
	}, nil
}

// regionOf is settings.region, "global" when unset.
func regionOf(t upstream.Target) (string, error) {
	r := strings.TrimSpace(t.Setting("region"))
	if r == "" {
		return defaultRegion, nil
	}
	if !validRegion(r) {
		return "", errors.New("vertex: settings.region is not a Google Cloud location")
	}
	return r, nil
}

// regionalHost is Vertex AI's address for a location: the global one has
// no location in its host name.
func regionalHost(region string) string {
	if region == defaultRegion {
		return globalHost
	}
	return "https://" + region + "-aiplatform.googleapis.com"
}

// call builds a POST of a publisher model's action.
func call(ctx context.Context, t upstream.Target, publisher, model, action string, body []byte) (*http.Request, error) {
	ep, err := resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	if ep.express && publisher != "google" {
		return nil, errors.New("vertex: express mode (an API key) serves Google's models only; Claude models need a service account key")
	}
	u := ep.prefix + "/publishers/" + publisher + "/models/" + url.PathEscape(model) + ":" + action
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	ep.auth(req)
	upstream.ApplyHeaders(req, t)
	return req, nil
}
