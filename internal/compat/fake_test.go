package compat

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The fakes are only worth something if they refuse what the real providers
// refuse and answer in the real shapes; these cases pin that down without
// Node, so they run in every `go test ./...`.

type fakeCase struct {
	name    string
	path    string
	headers map[string]string
	body    string
	status  int
	// want is a substring of the answer body.
	want string
}

func runFakeCases(t *testing.T, f *fake, cases []fakeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(raw), tc.want) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, raw, tc.status, tc.want)
			}
		})
	}
}

func TestOpenAIFakeChecksWhatItReceives(t *testing.T) {
	f := startFake(t, "openai", "k", openAIFake("up-openai", "k"))
	auth := map[string]string{"Authorization": "Bearer k"}
	hello := `{"model":"up-openai","messages":[{"role":"user","content":"Say hello."}]}`
	runFakeCases(t, f, []fakeCase{
		{"answers hello with usage", "/v1/chat/completions", auth, hello, 200, `"prompt_tokens":21`},
		{"refuses a wrong key", "/v1/chat/completions", map[string]string{"Authorization": "Bearer x"}, hello, 400, "Bearer"},
		{"refuses a wrong path", "/chat/completions", auth, hello, 400, "expected POST /v1/chat/completions"},
		{"refuses unknown fields", "/v1/chat/completions", auth,
			`{"model":"up-openai","messages":[{"role":"user","content":"x"}],"max_output_tokens":5}`, 400, "max_output_tokens"},
		{"refuses a tool result without its call", "/v1/chat/completions", auth,
			`{"model":"up-openai","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, 400, "answers no preceding tool call"},
		{"calls the tool when asked for the weather", "/v1/chat/completions", auth,
			`{"model":"up-openai","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`,
			200, `"finish_reason":"tool_calls"`},
		{"refuses a weather question without the tool", "/v1/chat/completions", auth,
			`{"model":"up-openai","messages":[{"role":"user","content":"weather?"}]}`, 400, "declares no get_weather"},
		{"streams usage only when asked", "/v1/chat/completions", auth,
			`{"model":"up-openai","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
			200, `"choices":[],"created"`},
		{"fails on request in its dialect", "/v1/chat/completions", auth,
			`{"model":"up-openai","messages":[{"role":"user","content":"server error"}]}`, 500, `"type":"server_error"`},
	})
	if problems, counts := f.snapshot(); len(problems) != 5 || counts["up-openai"] != 3 {
		t.Errorf("recorded %d problems and %v answers, want 5 and 3", len(problems), counts)
	}
}

func TestAnthropicFakeChecksWhatItReceives(t *testing.T) {
	f := startFake(t, "anthropic", "k", anthropicFake("up-anthropic", "k"))
	auth := map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"}
	hello := `{"model":"up-anthropic","max_tokens":5,"messages":[{"role":"user","content":"Say hello."}]}`
	runFakeCases(t, f, []fakeCase{
		{"answers hello with usage", "/v1/messages", auth, hello, 200, `"input_tokens":21`},
		{"refuses a missing version header", "/v1/messages", map[string]string{"x-api-key": "k"}, hello, 400, "anthropic-version"},
		{"refuses a Bearer key", "/v1/messages", map[string]string{"Authorization": "Bearer k", "anthropic-version": "1"}, hello, 400, "x-api-key"},
		{"refuses a missing max_tokens", "/v1/messages", auth,
			`{"model":"up-anthropic","messages":[{"role":"user","content":"x"}]}`, 400, "max_tokens"},
		{"refuses OpenAI fields", "/v1/messages", auth,
			`{"model":"up-anthropic","max_tokens":5,"n":1,"messages":[{"role":"user","content":"x"}]}`, 400, "Extra inputs"},
		{"refuses a tool_result without its tool_use", "/v1/messages", auth,
			`{"model":"up-anthropic","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]}`,
			400, "answers no tool_use"},
		{"answers a tool result with it", "/v1/messages", auth,
			`{"model":"up-anthropic","max_tokens":5,"messages":[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Paris"}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"sunny"}]}]}`,
			200, "Weather report: sunny"},
		{"streams the event sequence", "/v1/messages", auth,
			`{"model":"up-anthropic","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, 200, "event: message_stop"},
	})
	if problems, counts := f.snapshot(); len(problems) != 5 || counts["up-anthropic"] != 3 {
		t.Errorf("recorded %d problems and %v answers, want 5 and 3", len(problems), counts)
	}
}

func TestGeminiFakeChecksWhatItReceives(t *testing.T) {
	f := startFake(t, "gemini", "k", geminiFake("up-gemini", "k"))
	auth := map[string]string{"x-goog-api-key": "k"}
	gen := "/v1beta/models/up-gemini:generateContent"
	hello := `{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}`
	runFakeCases(t, f, []fakeCase{
		{"answers hello with usage", gen, auth, hello, 200, `"promptTokenCount":21`},
		{"takes the key from the query too", gen + "?key=k", nil, hello, 200, `"finishReason":"STOP"`},
		{"refuses a wrong key", gen, map[string]string{"x-goog-api-key": "x"}, hello, 400, "x-goog-api-key"},
		{"refuses another model's path", "/v1beta/models/other:generateContent", auth, hello, 400, "expected POST"},
		{"refuses unknown fields", gen, auth,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"messages":[]}`, 400, "Unknown name messages"},
		{"refuses an unknown role", gen, auth, `{"contents":[{"role":"assistant","parts":[{"text":"x"}]}]}`, 400, "valid role"},
		{"refuses a part without data", gen, auth, `{"contents":[{"role":"user","parts":[{}]}]}`, 400, "oneof field 'data'"},
		{"streams SSE with alt=sse", "/v1beta/models/up-gemini:streamGenerateContent?alt=sse", auth, hello, 200, "data: {"},
		{"streams a JSON array without alt", "/v1beta/models/up-gemini:streamGenerateContent", auth, hello, 200, `[{"candidates"`},
	})
	if problems, counts := f.snapshot(); len(problems) != 5 || counts["up-gemini"] != 4 {
		t.Errorf("recorded %d problems and %v answers, want 5 and 4", len(problems), counts)
	}
}

func TestDecideAnswersDeterministically(t *testing.T) {
	weatherTools := map[string]bool{weatherTool: true}
	cases := []struct {
		name    string
		in      turn
		want    reply
		problem bool
	}{
		{"greets by default", turn{userText: "Say hello."}, reply{text: "Hello from the k upstream."}, false},
		{"a tool result wins over the question", turn{userText: "weather", toolResult: "sunny", tools: weatherTools},
			reply{text: "Weather report: sunny"}, false},
		{"asks for the tool", turn{userText: "What is the weather?", tools: weatherTools}, reply{toolCall: true}, false},
		{"needs the tool declared", turn{userText: "What is the weather?"}, reply{}, true},
		{"fails on request", turn{userText: "Please fail with a server error."}, reply{fail: true}, false},
		{"describes images", turn{userText: "Describe the image.", images: []string{"image/png, 70 bytes"}},
			reply{text: "Image: image/png, 70 bytes."}, false},
		{"needs an image to describe", turn{userText: "Describe the image."}, reply{}, true},
		{"stalls a slow stream", turn{userText: "Send a slow stream"}, reply{text: "Hello from the k upstream.", slow: true}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problem := decide("k", tc.in)
			if got != tc.want || (problem != "") != tc.problem {
				t.Errorf("decide = %+v, %q; want %+v, problem %v", got, problem, tc.want, tc.problem)
			}
		})
	}
}

func TestSettingsEchoNamesMissingValues(t *testing.T) {
	half := 0.5
	var raw map[string]json.RawMessage
	_ = json.Unmarshal([]byte(`{"systemInstruction":{"parts":[{"text":"Be terse."}]},"contents":[{},{}],`+
		`"generation_config":{"max_output_tokens":77,"temperature":0.5,"stopSequences":["A","B"]}}`), &raw)
	got := geminiSettings(raw).String()
	want := `Settings: system="Be terse." turns=2 max_tokens=77 temperature=0.5 top_p=- stop=A|B`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if s := (settings{temperature: &half}).String(); !strings.Contains(s, "temperature=0.5 top_p=- stop=-") {
		t.Errorf("missing values are not shown as '-': %s", s)
	}
}

func TestOpenAIEndpointFakesCheckWhatTheyReceive(t *testing.T) {
	f := startFake(t, "openai", "k", openAIUpstreamFake("up-openai", "k"))
	auth := map[string]string{"Authorization": "Bearer k"}
	runFakeCases(t, f, []fakeCase{
		{"completes a prompt with usage", "/v1/completions", auth,
			`{"model":"up-openai-instruct","prompt":"hi"}`, 200, `"text":"Hello from the openai completions upstream."`},
		{"streams completion usage only when asked", "/v1/completions", auth,
			`{"model":"up-openai-instruct","prompt":"hi","stream":true,"stream_options":{"include_usage":true}}`, 200, `"choices":[],"created"`},
		{"refuses another model's completion", "/v1/completions", auth, `{"model":"up-openai","prompt":"hi"}`, 400, "expected one of"},
		{"refuses a wrong key on an endpoint", "/v1/embeddings", map[string]string{"Authorization": "Bearer x"},
			`{"model":"up-openai-embed","input":"hi"}`, 400, "Bearer"},
		{"embeds as little-endian float32 base64", "/v1/embeddings", auth,
			`{"model":"up-openai-embed","input":"hi","encoding_format":"base64"}`, 200, `"embedding":"AACAPgAAAL8AAAA+"`},
		{"refuses unknown embedding fields", "/v1/embeddings", auth,
			`{"model":"up-openai-embed","input":"hi","prompt":"x"}`, 400, "unrecognized request arguments prompt"},
		{"moderates with the default model", "/v1/moderations", auth,
			`{"model":"omni-moderation-latest","input":"I will hurt you"}`, 200, `"flagged":true`},
		{"refuses a moderation without a model", "/v1/moderations", auth, `{"input":"hi"}`, 400, "expected one of"},
		{"reranks best first with request indices", "/v1/rerank", auth,
			`{"model":"up-openai-rerank","query":"b","documents":["a","b"]}`, 200, `"results":[{"index":1,"relevance_score":1}`},
		{"refuses an empty search query", "/v1/alpha/search", auth, `{"model":"up-openai-search","query":""}`, 400, "non-empty"},
		{"speaks 40000 bytes", "/v1/audio/speech", auth,
			`{"model":"up-openai-tts","input":"hi","voice":"alloy"}`, 200, string(speechAudio()[:10])},
		{"refuses speech without a voice", "/v1/audio/speech", auth, `{"model":"up-openai-tts","input":"hi"}`, 400, "voice"},
		{"answers a response and stores it", "/v1/responses", auth, `{"model":"up-openai","input":"Say hello."}`, 200, `"id":"resp_fake_1"`},
		{"refuses nested chat-style tools in a response", "/v1/responses", auth,
			`{"model":"up-openai","input":"weather?","tools":[{"type":"function","function":{"name":"get_weather"}}]}`, 400, "flat"},
		{"refuses a function output without its call", "/v1/responses", auth,
			`{"model":"up-openai","input":[{"type":"function_call_output","call_id":"c1","output":"sunny"}]}`, 400, "No tool call found"},
		{"refuses a JSON image edit", "/v1/images/edits", auth, `{"model":"up-openai-image","prompt":"x"}`, 400, "multipart"},
	})
	problems, _ := f.snapshot()
	if len(problems) != 9 {
		t.Errorf("recorded %d problems, want 9: %q", len(problems), problems)
	}
	served := f.servedCounts()
	for _, k := range []endpointKey{{instructModel, "completions"}, {embedModel, "embeddings"}, {defaultModeration, "moderations"},
		{rerankModel, "rerank"}, {ttsModel, "audio_speech"}, {"up-openai", "responses"}} {
		if served[k] == 0 {
			t.Errorf("no answer counted for %v in %v", k, served)
		}
	}
}

func TestGeminiEmbedFakeChecksWhatItReceives(t *testing.T) {
	f := startFake(t, "gemini", "k", geminiEmbedFake(geminiFake("up-gemini", "k"), "up-gemini-embed", "k"))
	auth := map[string]string{"x-goog-api-key": "k"}
	path := "/v1beta/models/up-gemini-embed:batchEmbedContents"
	runFakeCases(t, f, []fakeCase{
		{"embeds each request", path, auth,
			`{"requests":[{"model":"models/up-gemini-embed","content":{"parts":[{"text":"a"}]}},` +
				`{"model":"models/up-gemini-embed","content":{"parts":[{"text":"b"}]}}]}`, 200, `{"values":[0.5,-0.5,0.125]}`},
		{"refuses a request naming another model", path, auth,
			`{"requests":[{"model":"models/other","content":{"parts":[{"text":"a"}]}}]}`, 400, "models/up-gemini-embed"},
		{"refuses an OpenAI body", path, auth, `{"input":"a"}`, 400, "Unknown name input"},
		{"leaves chat to the chat fake", "/v1beta/models/up-gemini:generateContent", auth,
			`{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}`, 200, "Hello from the gemini upstream."},
	})
}
