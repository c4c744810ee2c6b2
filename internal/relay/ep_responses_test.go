package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const respBody = `{"model":"gpt-4o-mini","input":"Hi","tools":[{"type":"web_search"}],"custom":{"keep":true}}`

func TestResponsesOnOpenAIChannelsPassThroughMappedAndBilledFromUsage(t *testing.T) {
	e := newEnv(t)
	f := &fakeResponsesAPI{}
	ch := e.responsesChannel("native", f)
	before := e.balance()
	resp := e.post("/v1/responses", testKey, respBody)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || body["id"] != "resp_up1" || gjsonOf(body, "output.0.content.0.text") != "Hello there" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	got := f.last(t)
	if got.path != "/v1/responses" || got.json("model").String() != "gpt-4o-mini-mapped" ||
		!got.json("custom.keep").Bool() || got.json("tools.0.type").String() != "web_search" {
		t.Fatalf("upstream got %s %s", got.path, got.raw)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d", charged, chargeFor1000x500)
	}
	row, other := e.lastConsume()
	if row.PromptTokens != 1000 || row.CompletionTokens != 500 || row.ChannelID != ch.ID || other["endpoint"] != "responses" {
		t.Fatalf("log row %+v other %v", row, other)
	}
	if _, named := other["dropped_tools"]; named {
		t.Fatalf("a native channel ran the hosted tool, yet the row says it was dropped: %v", other)
	}
}

func TestResponsesStreamFromOpenAIChannelsIsRelayedEventByEvent(t *testing.T) {
	e := newEnv(t)
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	before := e.balance()
	resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","stream":true}`)
	text := readAll(resp)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q: %s", resp.Header.Get("Content-Type"), text)
	}
	want := []string{"response.created", "response.output_text.delta", "response.output_text.delta", "response.completed"}
	if got := sseEventNames(text); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if !strings.Contains(text, `"delta":"Hello "`) || !strings.Contains(text, `"input_tokens":1000`) {
		t.Errorf("events were altered:\n%s", text)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d", charged, chargeFor1000x500)
	}
}

func TestResponsesWithoutUpstreamUsageAreBilledByCountedTokens(t *testing.T) {
	e := newEnv(t)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 1000, OutputPerMTok: 2000})
	e.responsesChannel("native", &fakeResponsesAPI{noUsage: true})
	before := e.balance()
	resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":[{"role":"user","content":[{"type":"input_text","text":"Hi"}]}]}`)
	if raw := readAll(resp); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	row, _ := e.lastConsume()
	// "Hi" and "Hello there" by the tokenizer: 1 and 2 tokens.
	if row.PromptTokens != 1 || row.CompletionTokens != 2 {
		t.Fatalf("counted %d/%d tokens", row.PromptTokens, row.CompletionTokens)
	}
	if charged := before - e.balance(); charged != (1*1000+2*2000)*500000/1_000_000 {
		t.Fatalf("charged %d", charged)
	}
}

// chatChannels are the channel kinds that serve Responses by conversion.
var chatChannels = []struct {
	name  string
	setup func(e *env, rc *recorder)
	path  string
}{
	{"anthropic", func(e *env, rc *recorder) {
		up := newFakeAnthropic(e.t, rc)
		e.channel("claude", up.URL, func(c *store.Channel) { c.Type = 14 })
	}, "/v1/messages"},
	{"gemini", func(e *env, rc *recorder) {
		up := newFakeGemini(e.t, rc)
		e.channel("gemini", up.URL, func(c *store.Channel) {
			c.Type, c.ModelMapping = 24, map[string]string{"gpt-4o-mini": "m"}
		})
	}, "/v1beta/models/m:"},
	{"chat-only openai", func(e *env, rc *recorder) {
		f := &fakeOpenAI{}
		up := newFake(e.t, f)
		e.channel("compat", up.URL, func(c *store.Channel) { c.Settings = map[string]any{"responses": "chat"} })
		rc.mu.Lock()
		rc.path = "/v1/chat/completions" // the fake answers only there
		rc.mu.Unlock()
	}, "/v1/chat/completions"},
}

func TestResponsesOnChatChannelsAreConvertedBothWays(t *testing.T) {
	for _, cc := range chatChannels {
		t.Run(cc.name, func(t *testing.T) {
			e := newEnv(t)
			rc := &recorder{}
			cc.setup(e, rc)
			before := e.balance()
			resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","instructions":"Be brief.","input":"Hi","max_output_tokens":300,"store":false}`)
			raw := readAll(resp)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			r := gjson.Parse(raw)
			if !strings.HasPrefix(r.Get("id").String(), "resp_") || r.Get("object").String() != "response" || r.Get("status").String() != "completed" ||
				r.Get("output.0.type").String() != "message" || r.Get("output.0.content.0.text").String() != "Hello there" ||
				r.Get("usage.input_tokens").Int() != 1000 || r.Get("usage.output_tokens").Int() != 500 || r.Get("instructions").String() != "Be brief." {
				t.Fatalf("not a Response object: %s", raw)
			}
			rc.mu.Lock()
			path := rc.path
			rc.mu.Unlock()
			if !strings.HasPrefix(path, cc.path) {
				t.Errorf("upstream path %s, want %s", path, cc.path)
			}
			if charged := before - e.balance(); charged != chargeFor1000x500 {
				t.Fatalf("charged %d, want %d", charged, chargeFor1000x500)
			}
		})
	}
}

func TestResponsesStreamFromChatChannelsIsTheFullEventSequence(t *testing.T) {
	for _, cc := range chatChannels {
		t.Run(cc.name, func(t *testing.T) {
			e := newEnv(t)
			cc.setup(e, &recorder{})
			before := e.balance()
			resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","stream":true}`)
			text := readAll(resp)
			names := sseEventNames(text)
			want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
			if len(names) < 8 || !slices.Equal(names[:4], want) || names[len(names)-1] != "response.completed" {
				t.Fatalf("events %v:\n%s", names, text)
			}
			tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
			if !slices.Equal(names[len(names)-4:], tail) {
				t.Fatalf("events end %v", names)
			}
			var final struct {
				SequenceNumber int `json:"sequence_number"`
				Response       struct {
					Output []struct {
						Content []struct{ Text string }
					}
					Usage struct{ InputTokens, OutputTokens int } `json:"usage"`
				}
			}
			last := text[strings.LastIndex(text, "data: ")+6:]
			if err := json.Unmarshal([]byte(strings.TrimSpace(last)), &final); err != nil {
				t.Fatal(err)
			}
			if final.SequenceNumber != len(names)-1 || final.Response.Output[0].Content[0].Text != "Hello there" {
				t.Fatalf("final event %+v", final)
			}
			if charged := before - e.balance(); charged != chargeFor1000x500 {
				t.Fatalf("charged %d, want %d", charged, chargeFor1000x500)
			}
		})
	}
}

func TestFunctionCallsAndOutputsBecomeChatToolTurns(t *testing.T) {
	e := newEnv(t)
	f := &fakeOpenAI{}
	up := newFake(t, f)
	e.channel("compat", up.URL, func(c *store.Channel) { c.Settings = map[string]any{"responses": false} })
	resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":[
		{"role":"user","content":"Weather?"},
		{"type":"function_call","call_id":"call_9","name":"weather","arguments":"{\"city\":\"Oslo\"}"},
		{"type":"function_call_output","call_id":"call_9","output":"cold"}],
		"tools":[{"type":"function","name":"weather","parameters":{"type":"object"},"strict":true}],"tool_choice":"auto","temperature":0.3}`)
	if raw := readAll(resp); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	b, _ := json.Marshal(f.last())
	got := gjson.ParseBytes(b)
	if got.Get("messages.1.tool_calls.0.id").String() != "call_9" || got.Get("messages.2.role").String() != "tool" ||
		got.Get("messages.2.tool_call_id").String() != "call_9" || got.Get("tools.0.function.name").String() != "weather" ||
		got.Get("temperature").Float() != 0.3 {
		t.Fatalf("upstream chat body %s", b)
	}
}

// Codex sends hosted tools on every turn; a chat channel cannot run them, so
// they are left out (and named in the usage row), never a refusal, while
// its custom and namespaced tools become plain functions.
func TestCodexToolsReachChatChannelsWithHostedToolsDropped(t *testing.T) {
	e := newEnv(t)
	f := &fakeOpenAI{}
	up := newFake(t, f)
	e.channel("compat", up.URL, func(c *store.Channel) { c.Settings = map[string]any{"responses": false} })
	resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","store":false,"tools":[
		{"type":"custom","name":"apply_patch","description":"Patch files."},
		{"type":"namespace","name":"mcp__fs","tools":[{"type":"function","name":"read","parameters":{"type":"object"}}]},
		{"type":"web_search"},{"type":"tool_search","execution":"client"}]}`)
	if raw := readAll(resp); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	b, _ := json.Marshal(f.last())
	got := gjson.ParseBytes(b)
	if got.Get("tools.#").Int() != 2 || got.Get("tools.0.function.name").String() != "apply_patch" ||
		got.Get("tools.0.function.parameters.properties.input.type").String() != "string" ||
		got.Get("tools.1.function.name").String() != "mcp__fs__read" {
		t.Fatalf("upstream chat body %s", b)
	}
	e.flush()
	rows, _, _ := e.st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{})
	if len(rows) != 1 || !strings.Contains(string(rows[0].Other), `"dropped_tools":["web_search","tool_search"]`) {
		t.Fatalf("usage rows %+v", rows)
	}
}

func TestWhatOnlyTheResponsesAPICanDoIsRefusedOnChatChannels(t *testing.T) {
	cases := []struct{ name, body, param string }{
		{"previous response", `{"model":"gpt-4o-mini","input":"Hi","previous_response_id":"resp_1"}`, "previous_response_id"},
		{"stored", `{"model":"gpt-4o-mini","input":"Hi","store":true}`, "store"},
		{"conversation", `{"model":"gpt-4o-mini","input":"Hi","conversation":{"id":"conv_1"}}`, "conversation"},
		{"background", `{"model":"gpt-4o-mini","input":"Hi","background":true}`, "background"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rc := &recorder{}
			up := newFakeAnthropic(t, rc)
			e.channel("claude", up.URL, func(c *store.Channel) { c.Type = 14 })
			before := e.balance()
			resp := e.post("/v1/responses", testKey, tc.body)
			body := readJSON(t, resp)
			if resp.StatusCode != 400 || gjsonOf(body, "error.param") != tc.param {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
			if rc.body != nil || e.balance() != before {
				t.Fatalf("the upstream was called or quota moved")
			}
		})
	}
}

func TestCompactIsForwardedToOpenAIChannelsAndRefusedOnChatOnes(t *testing.T) {
	e := newEnv(t)
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	before := e.balance()
	resp := e.post("/v1/responses/compact", testKey, `{"model":"gpt-4o-mini","input":[{"role":"user","content":"long talk"}]}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || body["object"] != "response.compaction" || f.last(t).path != "/v1/responses/compact" ||
		f.last(t).json("model").String() != "gpt-4o-mini-mapped" {
		t.Fatalf("status %d body %v upstream %s", resp.StatusCode, body, f.last(t).raw)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d", charged, chargeFor1000x500)
	}
	_, other := e.lastConsume()
	if other["endpoint"] != "responses_compact" {
		t.Errorf("log other %v", other)
	}

	chat := newEnv(t)
	up := newFakeAnthropic(t, &recorder{})
	chat.channel("claude", up.URL, func(c *store.Channel) { c.Type = 14 })
	resp = chat.post("/v1/responses/compact", testKey, `{"model":"gpt-4o-mini","input":"x"}`)
	body = readJSON(t, resp)
	if resp.StatusCode != 400 || gjsonOf(body, "error.code") != "unsupported" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
}

func TestStoredResponsesAreRetrievedOnlyByTheirOwner(t *testing.T) {
	e := newEnv(t)
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	readAll(e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi"}`))
	waitFor(t, func() bool { _, _, ok := e.relay.Responses.Lookup(t.Context(), "resp_up1"); return ok })
	before := e.balance()
	resp := e.do(http.MethodGet, "/v1/responses/resp_up1", testKey)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || body["id"] != "resp_up1" || f.last(t).method != http.MethodGet || f.last(t).auth != "Bearer "+f.key {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	if e.balance() != before {
		t.Errorf("retrieval was charged")
	}
	resp = e.do(http.MethodDelete, "/v1/responses/resp_up1", testKey)
	if body := readJSON(t, resp); resp.StatusCode != 200 || body["deleted"] != true {
		t.Fatalf("delete: status %d body %v", resp.StatusCode, body)
	}

	e.otherKey("sk-bob")
	calls := f.calls()
	for _, tc := range []struct{ id, key string }{{"resp_up1", "sk-bob"}, {"resp_unknown", testKey}} {
		resp := e.do(http.MethodGet, "/v1/responses/"+tc.id, tc.key)
		body := readJSON(t, resp)
		if resp.StatusCode != 404 || gjsonOf(body, "error.message") == "" {
			t.Fatalf("%s by %s: status %d body %v", tc.id, tc.key, resp.StatusCode, body)
		}
	}
	if f.calls() != calls {
		t.Errorf("a foreign or unknown id reached the upstream")
	}
}

func TestStoreFalseResponsesAreNotIndexed(t *testing.T) {
	e := newEnv(t)
	e.responsesChannel("native", &fakeResponsesAPI{})
	readAll(e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","store":false}`))
	if _, _, ok := e.relay.Responses.Lookup(t.Context(), "resp_up1"); ok {
		t.Fatal("an unstored response was indexed")
	}
}

// fakeHosts claims one model for the plugin host.
type fakeHosts struct{ model, id string }

func (h fakeHosts) ServeProtocol(w http.ResponseWriter, r *http.Request, protocol, model string, body []byte) bool {
	if protocol != "std_responses" || model != h.model || !json.Valid(body) {
		return false
	}
	w.WriteHeader(202)
	_, _ = w.Write([]byte(`{"served_by":"plugin"}`))
	return true
}

func (h fakeHosts) ServeResponse(w http.ResponseWriter, r *http.Request, id string) bool {
	if id != h.id {
		return false
	}
	_, _ = w.Write([]byte(`{"served_by":"plugin"}`))
	return true
}

func TestPluginClaimedModelsAndTasksGoToThePluginHost(t *testing.T) {
	e := newEnv(t)
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	e.relay.Hosts = fakeHosts{model: "video-model", id: "task_1"}
	resp := e.post("/v1/responses", testKey, `{"model":"video-model","input":"a cat"}`)
	if body := readJSON(t, resp); resp.StatusCode != 202 || body["served_by"] != "plugin" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	resp = e.do(http.MethodGet, "/v1/responses/task_1", testKey)
	if body := readJSON(t, resp); body["served_by"] != "plugin" {
		t.Fatalf("retrieval body %v", body)
	}
	resp = e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi"}`)
	if body := readJSON(t, resp); resp.StatusCode != 200 || body["id"] != "resp_up1" {
		t.Fatalf("unclaimed model: status %d body %v", resp.StatusCode, body)
	}
}

func TestBadResponsesRequestsAreRejectedBeforeAnyUpstreamCall(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BodyLimit = 4096 })
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	cases := []struct {
		name, path, key, body string
		status                int
	}{
		{"no key", "/v1/responses", "", respBody, 401},
		{"not JSON", "/v1/responses", testKey, `{"model":`, 400},
		{"no model", "/v1/responses", testKey, `{"input":"hi"}`, 400},
		{"unknown model", "/v1/responses", testKey, `{"model":"nope","input":"hi"}`, 404},
		{"too large", "/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"` + strings.Repeat("x", 5000) + `"}`, 413},
		{"compact too large", "/v1/responses/compact", testKey, `{"model":"gpt-4o-mini","input":"` + strings.Repeat("x", 5000) + `"}`, 413},
	}
	before := e.balance()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.post(tc.path, tc.key, tc.body)
			body := readJSON(t, resp)
			if resp.StatusCode != tc.status || gjsonOf(body, "error.message") == "" {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
		})
	}
	if f.calls() != 0 || e.balance() != before {
		t.Fatalf("%d upstream calls, balance moved by %d", f.calls(), before-e.balance())
	}
}

// A call on a stored response reports its failure to channel health like
// any attempt, judged by the channel's own policy.
func TestStoredResponseFailuresReachChannelHealth(t *testing.T) {
	tests := []struct {
		name      string
		settings  map[string]any
		wantState string
	}{
		{"a refused key is disabled", nil, routing.StateAutoDisabled},
		{"a refused key is disabled whatever the statuses: the provider said the key is invalid",
			map[string]any{"disable_statuses": []any{}}, routing.StateAutoDisabled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			f := &fakeResponsesAPI{}
			up := newFakeResponsesAPI(t, f)
			ch := e.channel("native", up.URL, func(c *store.Channel) {
				if c.Settings == nil {
					c.Settings = map[string]any{}
				}
				for k, v := range tc.settings {
					c.Settings[k] = v
				}
			})
			f.key = ch.Key
			e.useResponseIndex()
			readAll(e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi"}`))
			waitFor(t, func() bool { _, _, ok := e.relay.Responses.Lookup(t.Context(), "resp_up1"); return ok })
			f.mu.Lock()
			f.key = "the-provider-revoked-the-key"
			f.mu.Unlock()
			resp := e.do(http.MethodGet, "/v1/responses/resp_up1", testKey)
			readAll(resp)
			if resp.StatusCode < 400 {
				t.Fatalf("retrieval with a revoked key answered %d", resp.StatusCode)
			}
			if got := e.relay.Router.Health.Status(ch.ID, 0).State; got != tc.wantState {
				t.Fatalf("channel health %s, want %s", got, tc.wantState)
			}
		})
	}
}
