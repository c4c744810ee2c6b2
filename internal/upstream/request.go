package upstream

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// Target is one channel as an adapter needs it.
type Target struct {
	Type     int
	BaseURL  string
	Key      string
	Settings map[string]any
	// Model is the upstream model name after mapping.
	Model string
}

// Setting returns a string setting of the channel.
func (t Target) Setting(name string) string {
	if v, ok := t.Settings[name].(string); ok {
		return v
	}
	return ""
}

// Chat builds the upstream request of a chat-style call whose body is already
// in the channel's format. in carries the client's headers, from which only
// protocol headers that must travel (the messages version and beta flags)
// are copied; nothing else of the client reaches the provider.
func Chat(ctx context.Context, t Target, body []byte, stream bool, in http.Header) (*http.Request, error) {
	base := NormalizeBaseURL(t.BaseURL)
	var u string
	h := http.Header{}
	switch FormatOf(t.Type) {
	case protocol.Anthropic:
		u = base + "/v1/messages"
		h.Set("x-api-key", t.Key)
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
	case protocol.Gemini:
		action := ":generateContent"
		if stream {
			action = ":streamGenerateContent?alt=sse"
		}
		u = base + "/v1beta/models/" + url.PathEscape(t.Model) + action
		h.Set("x-goog-api-key", t.Key)
	default:
		return OpenAIRequest(ctx, t, http.MethodPost, "/v1/chat/completions", bytes.NewReader(body), "application/json")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// OpenAIRequest builds a request to an OpenAI-compatible channel for the
// given /v1 path, with the channel's authentication: Azure deployments and
// api-key header, Bearer for everyone else.
func OpenAIRequest(ctx context.Context, t Target, method, path string, body interface {
	Read([]byte) (int, error)
}, contentType string) (*http.Request, error) {
	base := NormalizeBaseURL(t.BaseURL)
	u := base + path
	if t.Type == TypeAzure {
		ver := t.Setting("api_version")
		if ver == "" {
			ver = "2024-10-21"
		}
		u = base + "/openai/deployments/" + url.PathEscape(t.Model) + strings.TrimPrefix(path, "/v1") + "?api-version=" + url.QueryEscape(ver)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if t.Type == TypeAzure {
		req.Header.Set("api-key", t.Key)
	} else if t.Key != "" {
		req.Header.Set("Authorization", "Bearer "+t.Key)
	}
	return req, nil
}
