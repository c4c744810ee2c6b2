package upstream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestChatRequestsFollowEachProvidersLayoutAndAuth(t *testing.T) {
	in := http.Header{}
	in.Set("anthropic-version", "2024-01-01")
	in.Set("anthropic-beta", "tools-2024")
	in.Set("Authorization", "Bearer client-key-must-not-travel")
	cases := []struct {
		name      string
		target    Target
		stream    bool
		wantURL   string
		wantAuth  [2]string
		wantExtra map[string]string
	}{
		{"openai", Target{Type: TypeOpenAI, BaseURL: "http://up:1", Key: "k", Model: "m"}, false,
			"http://up:1/v1/chat/completions", [2]string{"Authorization", "Bearer k"}, nil},
		{"trailing /v1 is not doubled", Target{Type: TypeDeepSeek, BaseURL: "http://up:1/v1/", Key: "k", Model: "m"}, false,
			"http://up:1/v1/chat/completions", [2]string{"Authorization", "Bearer k"}, nil},
		{"azure deployment and api-key", Target{Type: TypeAzure, BaseURL: "https://az.example", Key: "k", Model: "gpt-4o",
			Settings: map[string]any{"api_version": "2024-06-01"}}, false,
			"https://az.example/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01", [2]string{"api-key", "k"}, nil},
		{"anthropic keeps the client's version and beta", Target{Type: TypeAnthropic, BaseURL: "https://api.anthropic.example", Key: "k"}, false,
			"https://api.anthropic.example/v1/messages", [2]string{"x-api-key", "k"},
			map[string]string{"anthropic-version": "2024-01-01", "anthropic-beta": "tools-2024"}},
		{"gemini regular", Target{Type: TypeGemini, BaseURL: "https://g.example/v1beta", Key: "k", Model: "gemini-2.5-flash"}, false,
			"https://g.example/v1beta/models/gemini-2.5-flash:generateContent", [2]string{"x-goog-api-key", "k"}, nil},
		{"gemini stream asks for SSE", Target{Type: TypeGemini, BaseURL: "https://g.example", Key: "k", Model: "gemini-2.5-flash"}, true,
			"https://g.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", [2]string{"x-goog-api-key", "k"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := Builtin(tc.target.Type)
			if !ok {
				t.Fatalf("no adapter for type %d", tc.target.Type)
			}
			req, err := a.Chat(context.Background(), tc.target, []byte(`{"x":1}`), tc.stream, in)
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tc.wantURL {
				t.Fatalf("url %s, want %s", req.URL, tc.wantURL)
			}
			if got := req.Header.Get(tc.wantAuth[0]); got != tc.wantAuth[1] {
				t.Fatalf("%s = %q", tc.wantAuth[0], got)
			}
			for k, v := range tc.wantExtra {
				if req.Header.Get(k) != v {
					t.Fatalf("%s = %q, want %q", k, req.Header.Get(k), v)
				}
			}
			if strings.Contains(req.Header.Get("Authorization"), "client-key") {
				t.Fatal("the client's key travelled upstream")
			}
			body, _ := io.ReadAll(req.Body)
			if string(body) != `{"x":1}` {
				t.Fatalf("body %s", body)
			}
		})
	}
}

func TestAnthropicVersionDefaultsWhenTheClientSentNone(t *testing.T) {
	req, err := Anthropic{}.Chat(context.Background(), Target{Type: TypeAnthropic, BaseURL: "http://a", Key: "k"}, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("anthropic-version") != "2023-06-01" {
		t.Fatalf("version %q", req.Header.Get("anthropic-version"))
	}
}

func TestParseTypeAcceptsNamesNumbersAndAliases(t *testing.T) {
	cases := []struct {
		in   any
		want int
		ok   bool
	}{
		{"openai", 1, true}, {"Anthropic", 14, true}, {" gemini ", 24, true}, {"new_api", 60, true},
		{"peer_api", 60, true}, {"task_plugin", 61, true}, {"45", 45, true}, {float64(41), 41, true},
		{3, 3, true}, {int64(55), 55, true}, {"nope", 0, false}, {1.5, 0, false}, {nil, 0, false},
	}
	for _, tc := range cases {
		got, err := ParseType(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseType(%v) = %d, %v", tc.in, got, err)
		}
	}
	if TypeName(60) != "peer_api" || TypeName(999) != "999" {
		t.Errorf("TypeName: %s %s", TypeName(60), TypeName(999))
	}
}

func FuzzNormalizeBaseURL(f *testing.F) {
	f.Add("http://h:1/v1/")
	f.Add(" https://x/v1beta ")
	f.Fuzz(func(t *testing.T, s string) {
		once := NormalizeBaseURL(s)
		if strings.HasSuffix(once, "/") {
			t.Fatalf("%q keeps a trailing slash", once)
		}
	})
}
