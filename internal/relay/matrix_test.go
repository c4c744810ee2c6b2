package relay

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// recorder keeps what a fake upstream received.
type recorder struct {
	mu      sync.Mutex
	path    string
	headers http.Header
	body    map[string]any
}

func (rc *recorder) keep(r *http.Request) map[string]any {
	raw, _ := io.ReadAll(r.Body)
	return rc.keepRaw(r, raw)
}

func (rc *recorder) keepRaw(r *http.Request, raw []byte) map[string]any {
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	rc.mu.Lock()
	rc.path, rc.headers, rc.body = r.URL.String(), r.Header.Clone(), body
	rc.mu.Unlock()
	return body
}

func writeSSE(w http.ResponseWriter, events ...[2]string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range events {
		if ev[0] != "" {
			fmt.Fprintf(w, "event: %s\n", ev[0])
		}
		fmt.Fprintf(w, "data: %s\n\n", ev[1])
		w.(http.Flusher).Flush()
	}
}

func newFakeAnthropic(t *testing.T, rc *recorder) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := rc.keep(r)
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") == "" || r.Header.Get("anthropic-version") == "" {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad path or headers"}}`)
			return
		}
		if body["stream"] == true {
			writeSSE(w,
				[2]string{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":1}}}`},
				[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
				[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello "}}`},
				[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"there"}}`},
				[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`},
				[2]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":500}}`},
				[2]string{"message_stop", `{"type":"message_stop"}`})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hello there"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":500,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newFakeGemini(t *testing.T, rc *recorder) *httptest.Server {
	chunk := func(text, finish string, usage bool) string {
		s := `{"candidates":[{"content":{"role":"model","parts":[{"text":%q}]},"index":0%s}]%s,"modelVersion":"m"}`
		f, u := "", ""
		if finish != "" {
			f = `,"finishReason":"` + finish + `"`
		}
		if usage {
			u = `,"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":500,"totalTokenCount":1500}`
		}
		return fmt.Sprintf(s, text, f, u)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.keep(r)
		if r.Header.Get("x-goog-api-key") == "" || !strings.HasPrefix(r.URL.Path, "/v1beta/models/m:") {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"code":400,"message":"bad path or key","status":"INVALID_ARGUMENT"}}`)
			return
		}
		if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			writeSSE(w, [2]string{"", chunk("Hello ", "", false)}, [2]string{"", chunk("there", "STOP", true)})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, chunk("Hello there", "STOP", true))
	}))
	t.Cleanup(srv.Close)
	return srv
}

type clientCase struct {
	name     string
	request  func(e *env, stream bool) *http.Response
	checkOne func(t *testing.T, body []byte)
	checkSSE func(t *testing.T, body string)
}

var clients = []clientCase{
	{
		name: "openai",
		request: func(e *env, stream bool) *http.Response {
			return e.post("/v1/chat/completions", testKey, fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]}`, stream))
		},
		checkOne: func(t *testing.T, body []byte) {
			var v struct {
				Choices []struct{ Message struct{ Content string } }
				Usage   struct{ PromptTokens, CompletionTokens int } `json:"usage"`
			}
			if json.Unmarshal(body, &v) != nil || len(v.Choices) == 0 || v.Choices[0].Message.Content != "Hello there" {
				t.Fatalf("not an OpenAI answer: %s", body)
			}
		},
		checkSSE: func(t *testing.T, s string) {
			if !strings.Contains(s, `"content":"Hello `) || !strings.Contains(s, "data: [DONE]") {
				t.Fatalf("not an OpenAI stream:\n%s", s)
			}
		},
	},
	{
		name: "messages",
		request: func(e *env, stream bool) *http.Response {
			req, _ := http.NewRequest("POST", e.srv.URL+"/v1/messages", strings.NewReader(fmt.Sprintf(
				`{"model":"m","max_tokens":100,"stream":%v,"system":"Be brief.","messages":[{"role":"user","content":"Hi"}]}`, stream)))
			req.Header.Set("x-api-key", testKey)
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				e.t.Fatal(err)
			}
			return resp
		},
		checkOne: func(t *testing.T, body []byte) {
			var v struct {
				Type    string
				Content []struct{ Type, Text string }
				Usage   map[string]int
			}
			if json.Unmarshal(body, &v) != nil || v.Type != "message" || len(v.Content) == 0 || v.Content[0].Text != "Hello there" {
				t.Fatalf("not a messages answer: %s", body)
			}
			if v.Usage["input_tokens"] != 1000 || v.Usage["output_tokens"] != 500 {
				t.Fatalf("usage %v", v.Usage)
			}
		},
		checkSSE: func(t *testing.T, s string) {
			for _, want := range []string{"event: message_start", "event: content_block_delta", `"text":"Hello `, "event: message_delta", "event: message_stop"} {
				if !strings.Contains(s, want) {
					t.Fatalf("messages stream lacks %q:\n%s", want, s)
				}
			}
		},
	},
	{
		name: "alternate",
		request: func(e *env, stream bool) *http.Response {
			action := "generateContent"
			if stream {
				action = "streamGenerateContent?alt=sse"
			}
			req, _ := http.NewRequest("POST", e.srv.URL+"/v1beta/models/m:"+action, strings.NewReader(
				`{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`))
			req.Header.Set("x-goog-api-key", testKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				e.t.Fatal(err)
			}
			return resp
		},
		checkOne: func(t *testing.T, body []byte) {
			var v struct {
				Candidates []struct {
					Content struct{ Parts []struct{ Text string } }
				}
				UsageMetadata map[string]int
			}
			if json.Unmarshal(body, &v) != nil || len(v.Candidates) == 0 || len(v.Candidates[0].Content.Parts) == 0 ||
				v.Candidates[0].Content.Parts[0].Text != "Hello there" {
				t.Fatalf("not an alternate-native answer: %s", body)
			}
		},
		checkSSE: func(t *testing.T, s string) {
			if !strings.Contains(s, `"candidates"`) || !strings.Contains(s, "Hello ") {
				t.Fatalf("not an alternate-native stream:\n%s", s)
			}
		},
	},
}

func TestEveryClientFormatReachesEveryChannelKind(t *testing.T) {
	upstreams := []struct {
		name string
		typ  int
		make func(t *testing.T, rc *recorder) *httptest.Server
		// sent checks what the upstream received, in its own wire format.
		sent func(t *testing.T, rc *recorder, stream bool)
	}{
		{"openai", 1, func(t *testing.T, rc *recorder) *httptest.Server { return newFake(t, &fakeOpenAI{seen: rc}) }, sentOpenAI},
		{"anthropic", 14, newFakeAnthropic, sentAnthropic},
		{"gemini", 24, newFakeGemini, sentGemini},
	}
	for _, cl := range clients {
		for _, up := range upstreams {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("%s client to %s channel stream=%v", cl.name, up.name, stream)
				t.Run(name, func(t *testing.T) {
					e := newEnv(t)
					e.price("m", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60})
					rc := &recorder{}
					srv := up.make(t, rc)
					e.channel(up.name, srv.URL, func(c *store.Channel) { c.Type = up.typ; c.Models = []string{"m"} })
					before := e.balance()
					resp := cl.request(e, stream)
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %s", resp.StatusCode, raw)
					}
					if stream {
						cl.checkSSE(t, string(raw))
					} else {
						cl.checkOne(t, raw)
					}
					up.sent(t, rc, stream)
					e.flush()
					if got := before - e.balance(); got != chargeFor1000x500 {
						t.Fatalf("charged %d, want %d", got, chargeFor1000x500)
					}
				})
			}
		}
	}
}

// at reads a dotted path of a received JSON body.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func sentOpenAI(t *testing.T, rc *recorder, stream bool) {
	t.Helper()
	b := rc.body
	if rc.path != "/v1/chat/completions" || rc.headers.Get("Authorization") != "Bearer upstream-secret-openai" || b["model"] != "m" {
		t.Fatalf("openai upstream got %s %v", rc.path, b)
	}
	if at(b, "messages", 0, "role") != "system" || at(b, "messages", 0, "content") != "Be brief." || at(b, "messages", 1, "content") != "Hi" {
		t.Fatalf("openai upstream messages %v", b["messages"])
	}
	if stream && (b["stream"] != true || at(b, "stream_options", "include_usage") != true) {
		t.Fatalf("openai stream sent without usage requested: %v", b)
	}
	if !stream && b["stream"] == true {
		t.Fatalf("openai regular call sent as a stream: %v", b)
	}
}

func sentAnthropic(t *testing.T, rc *recorder, stream bool) {
	t.Helper()
	b := rc.body
	if rc.path != "/v1/messages" || rc.headers.Get("x-api-key") != "upstream-secret-anthropic" || b["model"] != "m" {
		t.Fatalf("anthropic upstream got %s %v", rc.path, b)
	}
	system := fmt.Sprint(b["system"])
	if !strings.Contains(system, "Be brief.") || at(b, "messages", 0, "role") != "user" || !strings.Contains(fmt.Sprint(at(b, "messages", 0, "content")), "Hi") {
		t.Fatalf("anthropic upstream system %v messages %v", b["system"], b["messages"])
	}
	if n, _ := b["max_tokens"].(float64); n < 1 || (b["stream"] == true) != stream {
		t.Fatalf("anthropic upstream max_tokens %v stream %v", b["max_tokens"], b["stream"])
	}
}

func sentGemini(t *testing.T, rc *recorder, stream bool) {
	t.Helper()
	b := rc.body
	want := "/v1beta/models/m:generateContent"
	if stream {
		want = "/v1beta/models/m:streamGenerateContent?alt=sse"
	}
	if rc.path != want || rc.headers.Get("x-goog-api-key") != "upstream-secret-gemini" {
		t.Fatalf("gemini upstream got %s", rc.path)
	}
	if at(b, "systemInstruction", "parts", 0, "text") != "Be brief." || at(b, "contents", 0, "role") != "user" || at(b, "contents", 0, "parts", 0, "text") != "Hi" {
		t.Fatalf("gemini upstream body %v", b)
	}
}

func TestMessagesSurfaceNeedsTheVersionHeaderAndAnswersInItsDialect(t *testing.T) {
	e := newEnv(t)
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[]}`))
	req.Header.Set("x-api-key", testKey)
	resp, _ := http.DefaultClient.Do(req)
	body := readJSON(t, resp)
	if resp.StatusCode != 400 || body["type"] != "error" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	req, _ = http.NewRequest("POST", e.srv.URL+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("x-api-key", testKey)
	req.Header.Set("provider-version", "2099-01-01")
	resp, _ = http.DefaultClient.Do(req)
	body = readJSON(t, resp)
	if resp.StatusCode != 400 || body["type"] != "error" || body["error"].(map[string]any)["type"] != "invalid_request_error" {
		t.Fatalf("max_tokens 0: status %d body %v", resp.StatusCode, body)
	}
}

func TestAlternateSurfaceErrorsUseItsDialect(t *testing.T) {
	e := newEnv(t)
	resp, _ := http.Post(e.srv.URL+"/v1beta/models/m:generateContent?key=wrong", "application/json", strings.NewReader(`{"contents":[]}`))
	body := readJSON(t, resp)
	errObj, _ := body["error"].(map[string]any)
	if resp.StatusCode != 401 || errObj["code"] != float64(401) || errObj["status"] == nil {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
}

func TestModelListShapeFollowsTheClientHeaders(t *testing.T) {
	e := newEnv(t)
	e.channel("c", newFake(t, &fakeOpenAI{}).URL, func(c *store.Channel) { c.Models = []string{"a", "b", "c"} })
	get := func(path string, h map[string]string) map[string]any {
		req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, _ := http.DefaultClient.Do(req)
		return readJSON(t, resp)
	}
	if v := get("/v1/models", map[string]string{"Authorization": "Bearer " + testKey}); v["object"] != "list" {
		t.Fatalf("openai shape: %v", v)
	}
	if v := get("/v1/models", map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01"}); v["has_more"] == nil {
		t.Fatalf("messages shape: %v", v)
	}
	page := get("/v1/models?key="+testKey+"&pageSize=2", nil)
	if len(page["models"].([]any)) != 2 || page["nextPageToken"] == nil {
		t.Fatalf("alternate shape page 1: %v", page)
	}
	rest := get(fmt.Sprintf("/v1beta/models?pageSize=2&pageToken=%s", page["nextPageToken"]), map[string]string{"x-goog-api-key": testKey})
	if len(rest["models"].([]any)) != 1 || rest["nextPageToken"] != "" {
		t.Fatalf("alternate shape page 2: %v", rest)
	}
	if v := get("/v1beta/openai/models", map[string]string{"Authorization": "Bearer " + testKey}); v["object"] != "list" {
		t.Fatalf("openai list in alternate namespace: %v", v)
	}
}

func TestRequestOneFormatCannotExpressMovesToAChannelThatCan(t *testing.T) {
	e := newEnv(t)
	e.price("m", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60})
	openaiUp := &fakeOpenAI{}
	e.channel("openai-first", newFake(t, openaiUp).URL, func(c *store.Channel) { c.Models = []string{"m"}; c.Priority = 10 })
	rc := &recorder{}
	e.channel("anthropic", newFakeAnthropic(t, rc).URL, func(c *store.Channel) { c.Type = 14; c.Models = []string{"m"} })
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/messages", strings.NewReader(
		`{"model":"m","max_tokens":100,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"news?"}]}`))
	req.Header.Set("x-api-key", testKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || openaiUp.calls() != 0 {
		t.Fatalf("status %d body %v; the OpenAI channel was called %d times", resp.StatusCode, body, openaiUp.calls())
	}
	tools, _ := rc.body["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["type"] != "web_search_20250305" {
		t.Fatalf("server tool not passed through: %v", rc.body)
	}
}

func TestProviderOutOfCreditIsNotTheClientsQuota(t *testing.T) {
	e := newEnv(t)
	e.channel("broke", newFake(t, &fakeOpenAI{status: 402}).URL, nil)
	resp := e.post("/v1/chat/completions", testKey, chatBody)
	body := readJSON(t, resp)
	if resp.StatusCode != 502 || body["error"].(map[string]any)["code"] != "upstream_quota_exhausted" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
}
