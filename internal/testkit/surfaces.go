package testkit

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// SurfaceCall is one chat call through one of the three client surfaces,
// asking for a tool call: provider tests send all of them to one channel to
// prove the provider serves every surface, regular and streaming.
type SurfaceCall struct {
	Name   string
	Path   string
	Stream bool
	Body   map[string]any
	Header map[string]string
}

// ToolName and ToolCity are the tool call every SurfaceCall invites; a fake
// provider answers with get_weather({"city":"Paris"}).
const (
	ToolName = "get_weather"
	ToolCity = "Paris"
)

var weatherSchema = map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}

// SurfaceCalls are the six calls (OpenAI-style chat, messages-native,
// alternate-native; each regular and streaming) for model.
func SurfaceCalls(model string) []SurfaceCall {
	ask := "What is the weather in Paris?"
	var out []SurfaceCall
	for _, stream := range []bool{false, true} {
		suffix := ""
		if stream {
			suffix = " stream"
		}
		out = append(out,
			SurfaceCall{Name: "openai" + suffix, Path: "/v1/chat/completions", Stream: stream, Body: map[string]any{
				"model": model, "stream": stream, "messages": []any{map[string]any{"role": "user", "content": ask}},
				"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": ToolName, "description": "weather", "parameters": weatherSchema}}},
			}},
			SurfaceCall{Name: "messages" + suffix, Path: "/v1/messages", Stream: stream, Header: map[string]string{"anthropic-version": "2023-06-01"},
				Body: map[string]any{"model": model, "max_tokens": 256, "stream": stream,
					"system":   "You answer with tools.",
					"messages": []any{map[string]any{"role": "user", "content": ask}},
					"tools":    []any{map[string]any{"name": ToolName, "description": "weather", "input_schema": weatherSchema}}}},
			SurfaceCall{Name: "alternate" + suffix, Path: altPath(model, stream), Stream: stream, Body: map[string]any{
				"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": ask}}}},
				"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": ToolName, "description": "weather", "parameters": weatherSchema}}}},
			}},
		)
	}
	return out
}

func altPath(model string, stream bool) string {
	if stream {
		return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	return "/v1beta/models/" + model + ":generateContent"
}

// DoSurface sends c with the API key key and returns the status and the
// whole answer (a stream read to its end).
func (g *Gateway) DoSurface(t testing.TB, c SurfaceCall, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.URL+c.Path, requestBody(t, c.Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("x-api-key", key)
	req.Header.Set("x-goog-api-key", key)
	for k, v := range c.Header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", c.Name, err)
	}
	return resp.StatusCode, string(raw)
}

// ConsumedQuotas waits until the usage log holds n consume rows of model
// (read with the root token) and returns their quotas, oldest first.
func (g *Gateway) ConsumedQuotas(t testing.TB, root, model string, n int) []int64 {
	t.Helper()
	var got []int64
	ok := WaitFor(10*time.Second, 20*time.Millisecond, func() bool {
		_, body := g.Do(t, "GET", "/api/logs?type=consume&page_size=100&model="+url.QueryEscape(model), root, nil)
		items, _ := body["items"].([]any)
		got = got[:0]
		for i := len(items) - 1; i >= 0; i-- {
			row, _ := items[i].(map[string]any)
			q, _ := row["quota"].(float64)
			got = append(got, int64(q))
		}
		return len(got) >= n
	})
	if !ok {
		t.Fatalf("the usage log has %d consume rows of %s, want %d", len(got), model, n)
	}
	return got
}
