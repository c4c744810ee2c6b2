package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
	"github.com/turnpike-gw/turnpike/internal/upstream/bedrock/bedrocktest"
)

var bedrockCreds = bedrocktest.Credentials{
	AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	SessionToken: "FwoGZXIvYXdzEXAMPLEsessiontoken", Region: "us-east-1",
}

// The mapped Bedrock model ids the fake answers for.
const (
	bedrockClaude    = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	bedrockThrottled = "anthropic.claude-3-haiku-20240307-v1:0"
	bedrockBreaking  = "amazon.nova-lite-v1:0"
)

// The fake's usage: 120 plain input tokens, 1000 read from and 200
// written to the cache, 35 out. At $2 / $10 / $0.2 / $2.5 per million
// (input, output, cache read, cache write) that is
// (120×2 + 35×10 + 1000×0.2 + 200×2.5) / 1e6 = $0.00129, and at 500000
// quota per dollar, 645 quota units per call.
const (
	bedrockUsage  = `{"inputTokens":120,"outputTokens":35,"totalTokens":1355,"cacheReadInputTokens":1000,"cacheWriteInputTokens":200}`
	bedrockCharge = 645
)

func bedrockReply(c bedrocktest.Call) bedrocktest.Reply {
	switch c.Model {
	case bedrockThrottled:
		return bedrocktest.Reply{Status: 429, ErrorType: "ThrottlingException", JSON: "Too many requests, please wait before trying again."}
	case bedrockBreaking:
		return bedrocktest.Reply{Events: []bedrocktest.Event{
			{Type: "messageStart", Payload: `{"role":"assistant"}`},
			{Type: "contentBlockDelta", Payload: `{"contentBlockIndex":0,"delta":{"text":"Partial answ"}}`},
			{Type: "modelStreamErrorException", Payload: `{"message":"The model failed mid-answer","originalStatusCode":500}`, Exception: true},
		}}
	}
	if c.Stream {
		return bedrocktest.Reply{Events: []bedrocktest.Event{
			{Type: "messageStart", Payload: `{"role":"assistant","p":"abcdefgh"}`},
			{Type: "contentBlockDelta", Payload: `{"contentBlockIndex":0,"delta":{"text":"Let me "}}`},
			{Type: "contentBlockDelta", Payload: `{"contentBlockIndex":0,"delta":{"text":"check."}}`},
			{Type: "contentBlockStop", Payload: `{"contentBlockIndex":0}`},
			{Type: "contentBlockStart", Payload: `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_w1","name":"get_weather"}}}`},
			{Type: "contentBlockDelta", Payload: `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}}`},
			{Type: "contentBlockDelta", Payload: `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`},
			{Type: "contentBlockStop", Payload: `{"contentBlockIndex":1}`},
			{Type: "messageStop", Payload: `{"stopReason":"tool_use"}`},
			{Type: "metadata", Payload: `{"usage":` + bedrockUsage + `,"metrics":{"latencyMs":420}}`},
		}}
	}
	return bedrocktest.Reply{JSON: `{"output":{"message":{"role":"assistant","content":[{"text":"Let me check."},{"toolUse":{"toolUseId":"tooluse_w1","name":"get_weather","input":{"city":"Paris"}}}]}},"stopReason":"tool_use","usage":` + bedrockUsage + `,"metrics":{"latencyMs":512}}`}
}

// bedrockGateway serves model "claude" on a Bedrock channel (key
// ACCESS|SECRET, region and session token in settings), "claude-fo" on a
// throttled Bedrock channel tried first and the good one after, and
// "nova" on a channel whose streams break off.
func bedrockGateway(t *testing.T) (*testkit.Gateway, *bedrocktest.Server) {
	fake := bedrocktest.New(t, bedrockCreds, bedrockReply)
	key := bedrockCreds.AccessKeyID + "|" + bedrockCreds.SecretAccessKey
	settings := func() map[string]any {
		return map[string]any{"region": bedrockCreds.Region, "session_token": bedrockCreds.SessionToken, "failure_threshold": 1000}
	}
	weight := 1
	price := config.SeedPrice{InputPerMTok: 2, OutputPerMTok: 10, CacheReadPerMTok: 0.2, CacheWritePerMTok: 2.5}
	g := testkit.Start(t,
		testkit.WithRootToken("root-secret"),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "a", User: "alice", Key: "sk-alice"}),
		testkit.WithChannels(
			config.SeedChannel{Name: "bedrock", Type: "aws", BaseURL: fake.URL, Key: key, Models: []string{"claude", "claude-fo"},
				Groups: []string{"default"}, Priority: 1, Weight: &weight, Settings: settings(),
				ModelMapping: map[string]string{"claude": bedrockClaude, "claude-fo": bedrockClaude}},
			config.SeedChannel{Name: "bedrock-throttled", Type: "aws", BaseURL: fake.URL, Key: key, Models: []string{"claude-fo"},
				Groups: []string{"default"}, Priority: 10, Weight: &weight, Settings: settings(),
				ModelMapping: map[string]string{"claude-fo": bedrockThrottled}},
			config.SeedChannel{Name: "bedrock-breaking", Type: 33, BaseURL: fake.URL, Key: key, Models: []string{"nova"},
				Groups: []string{"default"}, Weight: &weight, Settings: settings(),
				ModelMapping: map[string]string{"nova": bedrockBreaking}},
		),
		testkit.WithModels(map[string]config.SeedPrice{"claude": price, "claude-fo": price, "nova": price}),
	)
	return g, fake
}

func postRaw(t *testing.T, url string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// consumeRows is how many consume rows the usage log holds.
func consumeRows(t *testing.T, g *testkit.Gateway) int {
	_, body := g.Do(t, "GET", "/api/logs?type=consume&page_size=100", "root-secret", nil)
	items, _ := body["items"].([]any)
	return len(items)
}

// newestConsumeRow waits for the consume row after the first `before`
// rows and returns it.
func newestConsumeRow(t *testing.T, g *testkit.Gateway, before int) map[string]any {
	t.Helper()
	var row map[string]any
	if !testkit.WaitFor(5*time.Second, 20*time.Millisecond, func() bool {
		_, body := g.Do(t, "GET", "/api/logs?type=consume&page_size=100", "root-secret", nil)
		items, _ := body["items"].([]any)
		if len(items) <= before {
			return false
		}
		row = items[0].(map[string]any)
		return true
	}) {
		t.Fatal("no new consume row")
	}
	return row
}

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`

type bedrockSurface struct {
	name   string
	path   string
	header map[string]string
	body   string
	// check reads the client's answer for the tool call.
	check func(t *testing.T, answer string)
}

func bedrockSurfaces() []bedrockSurface {
	oa := map[string]string{"Authorization": "Bearer sk-alice"}
	msg := map[string]string{"x-api-key": "sk-alice", "anthropic-version": "2023-06-01"}
	alt := map[string]string{"x-goog-api-key": "sk-alice"}
	oaBody := `{"model":"claude","max_tokens":200,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":` + weatherSchema + `}}]`
	msgBody := `{"model":"claude","max_tokens":200,"system":"Be brief.","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"name":"get_weather","description":"Weather now","input_schema":` + weatherSchema + `}]`
	altBody := `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather now","parameters":` + weatherSchema + `}]}],"generationConfig":{"maxOutputTokens":200}}`
	return []bedrockSurface{
		{"openai", "/v1/chat/completions", oa, oaBody + `}`, func(t *testing.T, a string) {
			tc := gjson.Get(a, "choices.0.message.tool_calls.0")
			if tc.Get("function.name").Str != "get_weather" || tc.Get("function.arguments").Str != `{"city":"Paris"}` ||
				gjson.Get(a, "choices.0.finish_reason").Str != "tool_calls" || gjson.Get(a, "usage.prompt_tokens").Int() != 1320 {
				t.Fatalf("answer %s", a)
			}
		}},
		{"openai stream", "/v1/chat/completions", oa, oaBody + `,"stream":true,"stream_options":{"include_usage":true}}`, func(t *testing.T, a string) {
			args := ""
			for _, line := range strings.Split(a, "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if ok && data != "[DONE]" {
					args += gjson.Get(data, "choices.0.delta.tool_calls.0.function.arguments").Str
				}
			}
			if args != `{"city":"Paris"}` || !strings.Contains(a, `"name":"get_weather"`) || !strings.Contains(a, `"finish_reason":"tool_calls"`) ||
				!strings.Contains(a, "Let me ") || !strings.HasSuffix(strings.TrimSpace(a), "data: [DONE]") {
				t.Fatalf("stream %s", a)
			}
		}},
		{"messages", "/v1/messages", msg, msgBody + `}`, func(t *testing.T, a string) {
			tu := gjson.Get(a, `content.#(type=="tool_use")`)
			if tu.Get("name").Str != "get_weather" || tu.Get("input.city").Str != "Paris" || gjson.Get(a, "stop_reason").Str != "tool_use" ||
				gjson.Get(a, "usage.cache_read_input_tokens").Int() != 1000 || gjson.Get(a, "usage.input_tokens").Int() != 120 {
				t.Fatalf("answer %s", a)
			}
		}},
		{"messages stream", "/v1/messages", msg, msgBody + `,"stream":true}`, func(t *testing.T, a string) {
			if !strings.Contains(a, `"type":"tool_use"`) || !strings.Contains(a, `"name":"get_weather"`) || !strings.Contains(a, `"partial_json":"\"Paris\"}"`) ||
				!strings.Contains(a, `"stop_reason":"tool_use"`) || !strings.Contains(a, "event: message_stop") {
				t.Fatalf("stream %s", a)
			}
		}},
		{"alternate-native", "/v1beta/models/claude:generateContent", alt, altBody, func(t *testing.T, a string) {
			fc := gjson.Get(a, "candidates.0.content.parts.#(functionCall).functionCall")
			if fc.Get("name").Str != "get_weather" || fc.Get("args.city").Str != "Paris" {
				t.Fatalf("answer %s", a)
			}
		}},
		{"alternate-native stream", "/v1beta/models/claude:streamGenerateContent?alt=sse", alt, altBody, func(t *testing.T, a string) {
			var call gjson.Result
			for _, line := range strings.Split(a, "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					if fc := gjson.Get(data, "candidates.0.content.parts.#(functionCall).functionCall"); fc.Exists() {
						call = fc
					}
				}
			}
			if call.Get("name").Str != "get_weather" || call.Get("args.city").Str != "Paris" || !strings.Contains(a, "Let me ") ||
				!strings.Contains(a, `"promptTokenCount":1320`) {
				t.Fatalf("stream %s", a)
			}
		}},
	}
}

// A Bedrock channel serves all three client surfaces, regular and
// streamed, with a tool call: each request reaches the fake signed so that
// it verifies (the fake refuses any other with 403), at the mapped model's
// /converse or /converse-stream with the tool as a toolSpec, and each call
// is billed exactly from the fake's usage, cache tokens at their prices.
func TestBedrockChannelServesEverySurfaceWithToolsBilledExactly(t *testing.T) {
	g, fake := bedrockGateway(t)
	for _, s := range bedrockSurfaces() {
		t.Run(s.name, func(t *testing.T) {
			before := consumeRows(t, g)
			resp, answer := postRaw(t, g.URL+s.path, s.header, s.body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, answer)
			}
			s.check(t, answer)
			calls := fake.Calls()
			last := calls[len(calls)-1]
			stream := strings.Contains(s.name, "stream")
			if last.Model != bedrockClaude || last.Stream != stream {
				t.Fatalf("fake got model %q stream %v", last.Model, last.Stream)
			}
			if name := gjson.GetBytes(last.Body, "toolConfig.tools.0.toolSpec.name").Str; name != "get_weather" ||
				gjson.GetBytes(last.Body, "system.0.text").Str != "Be brief." || gjson.GetBytes(last.Body, "inferenceConfig.maxTokens").Int() != 200 {
				t.Fatalf("converse body %s", last.Body)
			}
			row := newestConsumeRow(t, g, before)
			if q := int64(row["quota"].(float64)); q != bedrockCharge {
				t.Fatalf("charged %d, want %d (row %v)", q, bedrockCharge, row)
			}
			if row["prompt_tokens"] != float64(1320) || row["completion_tokens"] != float64(35) {
				t.Fatalf("row tokens %v / %v", row["prompt_tokens"], row["completion_tokens"])
			}
		})
	}
	if fake.Refused() != 0 {
		t.Fatalf("the fake refused %d requests", fake.Refused())
	}
	_, users := g.Do(t, "GET", "/api/users?page_size=100", "root-secret", nil)
	for _, it := range users["items"].([]any) {
		if u := it.(map[string]any); u["username"] == "alice" && u["quota"] != float64(1_000_000-6*bedrockCharge) {
			t.Fatalf("alice's balance %v, want %d", u["quota"], 1_000_000-6*bedrockCharge)
		}
	}
}

// A ThrottlingException (429) before the first byte moves the call to the
// next channel; the client never sees it.
func TestBedrockThrottlingFailsOverToTheNextChannel(t *testing.T) {
	for _, stream := range []string{"false", "true"} {
		t.Run("stream="+stream, func(t *testing.T) {
			g, fake := bedrockGateway(t)
			resp, answer := postRaw(t, g.URL+"/v1/chat/completions", map[string]string{"Authorization": "Bearer sk-alice"},
				`{"model":"claude-fo","messages":[{"role":"user","content":"hi"}],"stream":`+stream+`}`)
			if resp.StatusCode != 200 || !strings.Contains(answer, "check.") || strings.Contains(answer, "Too many") {
				t.Fatalf("%d %s", resp.StatusCode, answer)
			}
			var models []string
			for _, c := range fake.Calls() {
				models = append(models, c.Model)
			}
			if want := bedrockThrottled + " " + bedrockClaude; strings.Join(models, " ") != want {
				t.Fatalf("calls %v, want %s", models, want)
			}
		})
	}
}

// An exception frame in the middle of a stream ends the client's stream
// as broken: what was relayed stays, no normal ending follows.
func TestBedrockExceptionMidStreamEndsTheClientStreamBroken(t *testing.T) {
	g, _ := bedrockGateway(t)
	resp, answer := postRaw(t, g.URL+"/v1/chat/completions", map[string]string{"Authorization": "Bearer sk-alice"},
		`{"model":"nova","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(answer, "Partial answ") {
		t.Fatalf("%d %s", resp.StatusCode, answer)
	}
	if strings.Contains(answer, "[DONE]") || strings.Contains(answer, `"finish_reason":"stop"`) {
		t.Fatalf("a broken stream ended normally: %s", answer)
	}
	resp, answer = postRaw(t, g.URL+"/v1/messages", map[string]string{"x-api-key": "sk-alice", "anthropic-version": "2023-06-01"},
		`{"model":"nova","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(answer, "Partial answ") || strings.Contains(answer, "message_stop") {
		t.Fatalf("%d %s", resp.StatusCode, answer)
	}
	if !testkit.WaitFor(2*time.Second, 20*time.Millisecond, func() bool {
		return strings.Count(g.Log(), "stream ended early") == 2 && strings.Contains(g.Log(), "The model failed mid-answer")
	}) {
		t.Fatalf("the broken streams were not logged as such:\n%s", g.Log())
	}
}

// Saving a Bedrock channel through the admin API refuses what its
// requests could not be signed with, naming the field, never the key.
func TestBedrockChannelSettingsAreCheckedWhenSaved(t *testing.T) {
	g, _ := bedrockGateway(t)
	cases := []struct {
		name     string
		key      string
		settings map[string]any
		field    string
	}{
		{"no region", "AKIAEXAMPLE|topsecretvalue", map[string]any{}, "settings.region"},
		{"a region that is not one", "AKIAEXAMPLE|topsecretvalue", map[string]any{"region": "N. Virginia"}, "settings.region"},
		{"a key without its secret", "AKIAEXAMPLE|", map[string]any{"region": "us-east-1"}, "key"},
		{"a key with three parts", "AKIAEXAMPLE|topsecretvalue|token", map[string]any{"region": "us-east-1"}, "key"},
		{"a session token that is not text", "AKIAEXAMPLE|topsecretvalue", map[string]any{"region": "us-east-1", "session_token": 12}, "settings.session_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
				"name": "b2", "type": "aws", "key": tc.key, "models": []string{"x"}, "settings": tc.settings,
			})
			raw, _ := json.Marshal(body)
			if status != 400 || !strings.Contains(string(raw), tc.field) {
				t.Fatalf("%d %s, want 400 naming %s", status, raw, tc.field)
			}
			if strings.Contains(string(raw), "topsecretvalue") {
				t.Fatalf("the answer repeats the key: %s", raw)
			}
		})
	}
	status, body := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
		"name": "b3", "type": "aws", "key": "AKIAEXAMPLE|topsecretvalue", "models": []string{"x"}, "settings": map[string]any{"region": "eu-central-1"},
	})
	if status != 200 && status != 201 {
		t.Fatalf("a good channel was refused: %d %v", status, body)
	}
}

// OpenAI-style embeddings on a Bedrock channel go to InvokeModel in the
// Titan body, signed, and are billed from Titan's token count: 7 tokens
// at $1000 per million is $0.007, 3500 quota units.
func TestBedrockEmbeddingsAreBilledFromTitansCount(t *testing.T) {
	fake := bedrocktest.New(t, bedrockCreds, func(c bedrocktest.Call) bedrocktest.Reply {
		return bedrocktest.Reply{JSON: `{"embedding":[0.25,-0.5,1],"inputTextTokenCount":7}`}
	})
	weight := 1
	g := testkit.Start(t,
		testkit.WithRootToken("root-secret"),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "a", User: "alice", Key: "sk-alice"}),
		testkit.WithChannels(config.SeedChannel{Name: "titan", Type: "bedrock", BaseURL: fake.URL,
			Key: bedrockCreds.AccessKeyID + "|" + bedrockCreds.SecretAccessKey, Models: []string{"titan"}, Groups: []string{"default"},
			Weight: &weight, ModelMapping: map[string]string{"titan": "amazon.titan-embed-text-v2:0"},
			Settings: map[string]any{"region": bedrockCreds.Region, "session_token": bedrockCreds.SessionToken}}),
		testkit.WithModels(map[string]config.SeedPrice{"titan": {InputPerMTok: 1000}}),
	)
	resp, answer := postRaw(t, g.URL+"/v1/embeddings", map[string]string{"Authorization": "Bearer sk-alice"},
		`{"model":"titan","input":"hello world","dimensions":256}`)
	if resp.StatusCode != 200 || gjson.Get(answer, "data.0.embedding.1").Num != -0.5 || gjson.Get(answer, "usage.prompt_tokens").Int() != 7 {
		t.Fatalf("%d %s", resp.StatusCode, answer)
	}
	calls := fake.Calls()
	if len(calls) != 1 || calls[0].Action != "invoke" || string(calls[0].Body) != `{"dimensions":256,"inputText":"hello world"}` {
		t.Fatalf("calls %+v", calls)
	}
	if q := int64(newestConsumeRow(t, g, 0)["quota"].(float64)); q != 3500 {
		t.Fatalf("charged %d, want 3500", q)
	}
	resp, answer = postRaw(t, g.URL+"/v1/embeddings", map[string]string{"Authorization": "Bearer sk-alice"},
		`{"model":"titan","input":["one","two"]}`)
	if resp.StatusCode != 400 || !strings.Contains(answer, "one text per request") {
		t.Fatalf("two texts for Titan: %d %s", resp.StatusCode, answer)
	}
}
