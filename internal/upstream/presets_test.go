package upstream

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestPresetsReachTheirProvidersPublicPaths(t *testing.T) {
	cases := []struct {
		name     string
		target   Target
		path     string
		wantURL  string
		wantAuth [2]string
	}{
		{"volcengine default", Target{Type: TypeVolcEngine, Key: "k"}, "/v1/chat/completions",
			"https://ark.cn-beijing.volces.com/api/v3/chat/completions", [2]string{"Authorization", "Bearer k"}},
		{"volcengine prefix typed into the address is not doubled", Target{Type: TypeVolcEngine, BaseURL: "https://ark.example/api/v3", Key: "k"}, "/v1/chat/completions",
			"https://ark.example/api/v3/chat/completions", [2]string{"Authorization", "Bearer k"}},
		{"zhipu v4", Target{Type: TypeZhipuV4, Key: "k"}, "/v1/embeddings",
			"https://open.bigmodel.cn/api/paas/v4/embeddings", [2]string{"Authorization", "Bearer k"}},
		{"openrouter", Target{Type: TypeOpenRouter, Key: "k"}, "/v1/chat/completions",
			"https://openrouter.ai/api/v1/chat/completions", [2]string{"Authorization", "Bearer k"}},
		{"perplexity has no version path", Target{Type: TypePerplexity, Key: "k"}, "/v1/chat/completions",
			"https://api.perplexity.ai/chat/completions", [2]string{"Authorization", "Bearer k"}},
		{"settings.path_prefix replaces /v1", Target{Type: TypeCustom, BaseURL: "http://llm.local:8000", Key: "k",
			Settings: map[string]any{"path_prefix": "openai/v2/"}}, "/v1/chat/completions",
			"http://llm.local:8000/openai/v2/chat/completions", [2]string{"Authorization", "Bearer k"}},
		{"empty path_prefix serves at the root", Target{Type: TypeOpenAI, BaseURL: "http://h", Key: "k",
			Settings: map[string]any{"path_prefix": ""}}, "/v1/models",
			"http://h/models", [2]string{"Authorization", "Bearer k"}},
		{"azure deployments map", Target{Type: TypeAzure, BaseURL: "https://r.openai.azure.com", Key: "k", Model: "gpt-4o",
			Settings: map[string]any{"deployments": map[string]any{"gpt-4o": "prod-4o"}}}, "/v1/embeddings",
			"https://r.openai.azure.com/openai/deployments/prod-4o/embeddings?api-version=2024-10-21", [2]string{"api-key", "k"}},
		{"azure v1 form", Target{Type: TypeAzure, BaseURL: "https://r.openai.azure.com", Key: "k", Model: "gpt-4o",
			Settings: map[string]any{"api_version": "v1"}}, "/v1/chat/completions",
			"https://r.openai.azure.com/openai/v1/chat/completions", [2]string{"api-key", "k"}},
		{"azure responses are account-wide", Target{Type: TypeAzure, BaseURL: "https://r.openai.azure.com", Key: "k", Model: "gpt-4o",
			Settings: map[string]any{"api_version": "2025-04-01-preview"}}, "/v1/responses/resp_1?include=x",
			"https://r.openai.azure.com/openai/responses/resp_1?include=x&api-version=2025-04-01-preview", [2]string{"api-key", "k"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := Builtin(tc.target.Type)
			if n, ok := a.(ModelNamer); ok {
				tc.target.Model = n.UpstreamModel(tc.target)
			}
			req, err := a.(Endpoints).Endpoint(context.Background(), tc.target, http.MethodPost, tc.path, http.NoBody, "application/json")
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tc.wantURL {
				t.Fatalf("url %s, want %s", req.URL, tc.wantURL)
			}
			if got := req.Header.Get(tc.wantAuth[0]); got != tc.wantAuth[1] {
				t.Fatalf("%s = %q", tc.wantAuth[0], got)
			}
		})
	}
}

func TestStaticHeadersTravelOnEveryRequest(t *testing.T) {
	tg := Target{Type: TypeOpenRouter, Key: "k", Settings: map[string]any{"headers": map[string]any{"HTTP-Referer": "https://app.example", "X-Title": "app"}}}
	a, _ := Builtin(tg.Type)
	req, err := a.Chat(context.Background(), tg, []byte(`{}`), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("HTTP-Referer") != "https://app.example" || req.Header.Get("X-Title") != "app" {
		t.Fatalf("headers %v", req.Header)
	}
	if req.Header.Get("Accept") != "text/event-stream" {
		t.Fatal("a stream asks for SSE")
	}
}

func TestBadSettingsAreRefusedWithWhatToFix(t *testing.T) {
	cases := []struct {
		target Target
		field  string
	}{
		{Target{Type: TypeAzure}, "base_url"},
		{Target{Type: TypeAzure, BaseURL: "https://r", Settings: map[string]any{"deployments": "x"}}, "settings.deployments"},
		{Target{Type: TypeAzure, BaseURL: "https://r", Settings: map[string]any{"deployments": map[string]any{"m": 1}}}, "settings.deployments.m"},
		{Target{Type: TypeCustom}, "base_url"},
	}
	for _, tc := range cases {
		a, _ := Builtin(tc.target.Type)
		err := a.(Validator).Validate(tc.target)
		se, ok := err.(*SettingError)
		if !ok || se.Field != tc.field {
			t.Errorf("type %d: %v, want an error on %s", tc.target.Type, err, tc.field)
		}
	}
	if err := (Azure{}).Validate(Target{BaseURL: "https://r"}); err != nil {
		t.Fatal(err)
	}
}

func TestTaskCarriersHaveNoChatWire(t *testing.T) {
	for _, typ := range []int{TypeKling, TypeJimeng, TypeSunoAPI, TypePeerAPI, TypeTaskPlugin} {
		if _, ok := Builtin(typ); ok || !IsTaskCarrier(typ) {
			t.Errorf("type %d", typ)
		}
	}
	if !strings.Contains(TypeName(TypeAWS), "aws") {
		t.Fatal(TypeName(TypeAWS))
	}
}
