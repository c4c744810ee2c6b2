package relay

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// endpointChannel adds an OpenAI-type channel for the given models on a
// fake endpoint upstream, with the first model mapped to "<model>-mapped".
func (e *env) endpointChannel(name string, f *fakeEndpoints, typ int, models ...string) *store.Channel {
	up := newFakeEndpoints(e.t, f)
	return e.channel(name, up.URL, func(c *store.Channel) {
		c.Type, c.Models = typ, models
		c.ModelMapping = map[string]string{models[0]: models[0] + "-mapped"}
	})
}

func TestCompletionsAreRelayedWithMappingAndBilledByTokens(t *testing.T) {
	e := newEnv(t)
	e.price("davinci-3", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60})
	f := &fakeEndpoints{}
	ch := e.endpointChannel("main", f, 1, "davinci-3")
	before := e.balance()
	resp := e.post("/v1/completions", testKey, `{"model":"davinci-3","prompt":"Say this","max_tokens":7,"logprobs":2}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || gjsonOf(body, "choices.0.text") != "once upon a time" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	got := f.last(t)
	if got.path != "/v1/completions" || got.auth != "Bearer "+ch.Key || got.json("model").String() != "davinci-3-mapped" || got.json("logprobs").Int() != 2 {
		t.Fatalf("upstream got %s %s %s", got.path, got.auth, got.raw)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d", charged, chargeFor1000x500)
	}
	row, other := e.lastConsume()
	if row.PromptTokens != 1000 || row.CompletionTokens != 500 || other["endpoint"] != "completions" || other["upstream_model"] != "davinci-3-mapped" {
		t.Fatalf("log row %+v other %v", row, other)
	}
}

func TestCompletionStreamIsPassedThroughAndBilledFromUpstreamUsage(t *testing.T) {
	e := newEnv(t)
	e.price("davinci-3", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60})
	f := &fakeEndpoints{}
	e.endpointChannel("main", f, 1, "davinci-3")
	before := e.balance()
	resp := e.post("/v1/completions", testKey, `{"model":"davinci-3","prompt":"Say this","stream":true}`)
	text := readAll(resp)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`"text":"once "`, `"text":"a time"`, "data: [DONE]"} {
		if !strings.Contains(text, want) {
			t.Errorf("stream lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, `"usage"`) {
		t.Errorf("the usage chunk the gateway asked for reached the client:\n%s", text)
	}
	if !f.last(t).json("stream_options.include_usage").Bool() {
		t.Errorf("usage was not requested upstream: %s", f.last(t).raw)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d", charged, chargeFor1000x500)
	}
}

func TestCompletionWithoutUpstreamUsageIsBilledByCountedTokens(t *testing.T) {
	e := newEnv(t)
	e.price("davinci-3", store.ModelPrice{InputPerMTok: 2, OutputPerMTok: 4})
	e.endpointChannel("main", &fakeEndpoints{noUsage: true}, 1, "davinci-3")
	before := e.balance()
	resp := e.post("/v1/completions", testKey, `{"model":"davinci-3","prompt":["Say this","and that"]}`)
	readAll(resp)
	in := tokenize.Count("davinci-3", "Say this") + tokenize.Count("davinci-3", "and that")
	out := tokenize.Count("davinci-3", "once upon a time")
	// 2 $/Mtok is 1 quota unit per input token, 4 $/Mtok 2 per output token.
	if charged, want := before-e.balance(), int64(in+2*out); charged != want {
		t.Fatalf("charged %d, want %d", charged, want)
	}
}

func TestEmbeddingsOnOpenAIChannelsPassThroughAndBillUsage(t *testing.T) {
	cases := []struct {
		name, path, body string
	}{
		{"embeddings", "/v1/embeddings", `{"model":"emb-small","input":["a","b"],"encoding_format":"float"}`},
		{"engines path takes the model from the URL", "/v1/engines/emb-small/embeddings", `{"input":"a"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("emb-small", store.ModelPrice{InputPerMTok: 2})
			f := &fakeEndpoints{}
			e.endpointChannel("main", f, 1, "emb-small")
			before := e.balance()
			resp := e.post(tc.path, testKey, tc.body)
			body := readJSON(t, resp)
			if resp.StatusCode != 200 || gjsonOf(body, "object") != "list" {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
			got := f.last(t)
			if got.path != "/v1/embeddings" || got.json("model").String() != "emb-small-mapped" {
				t.Fatalf("upstream got %s %s", got.path, got.raw)
			}
			if charged := before - e.balance(); charged != 1000 {
				t.Fatalf("charged %d, want 1000", charged)
			}
		})
	}
}

func TestEmbeddingsOnGeminiChannelsAreConvertedBothWays(t *testing.T) {
	e := newEnv(t)
	e.price("gem-embed", store.ModelPrice{InputPerMTok: 2})
	f := &fakeEndpoints{}
	ch := e.endpointChannel("gem", f, 24, "gem-embed")
	before := e.balance()
	resp := e.post("/v1/embeddings", testKey, `{"model":"gem-embed","input":["hello world","second text"],"encoding_format":"base64","dimensions":2}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	got := f.last(t)
	if got.path != "/v1beta/models/gem-embed-mapped:batchEmbedContents" || got.googKey != ch.Key || got.auth != "" {
		t.Fatalf("upstream got %s key %q auth %q", got.path, got.googKey, got.auth)
	}
	if got.json("requests.1.content.parts.0.text").String() != "second text" || got.json("requests.0.model").String() != "models/gem-embed-mapped" ||
		got.json("requests.0.outputDimensionality").Int() != 2 {
		t.Fatalf("upstream body %s", got.raw)
	}
	vec := decodeFloat32s(t, gjsonOf(body, "data.1.embedding"))
	if len(vec) != 2 || vec[0] != 1.5 || vec[1] != -0.25 || gjsonOf(body, "data.1.index") != "1" {
		t.Fatalf("second vector %v in %v", vec, body)
	}
	tokens := tokenize.Count("gem-embed", "hello world") + tokenize.Count("gem-embed", "second text")
	if gjsonOf(body, "usage.prompt_tokens") != jsonInt(tokens) {
		t.Errorf("usage %v, want %d prompt tokens", body["usage"], tokens)
	}
	if charged := before - e.balance(); charged != int64(tokens) {
		t.Fatalf("charged %d, want %d", charged, tokens)
	}
}

func TestAltEmbedActionsServeBothChannelKinds(t *testing.T) {
	cases := []struct {
		name, action, body string
		chType             int
		wantPath           string
		check              func(t *testing.T, got seenRequest, answer string)
		wantCharge         func() int64
	}{
		{"embedContent on an OpenAI channel", "embedContent", `{"content":{"parts":[{"text":"hi"},{"text":"there"}]},"outputDimensionality":2}`, 1, "/v1/embeddings",
			func(t *testing.T, got seenRequest, answer string) {
				if got.json("input.0").String() != "hi\nthere" || got.json("model").String() != "emb-x-mapped" || got.json("dimensions").Int() != 2 {
					t.Errorf("upstream body %s", got.raw)
				}
				if gjson.Get(answer, "embedding.values.1").Float() != -0.25 {
					t.Errorf("answer %s", answer)
				}
			}, func() int64 { return 1000 }},
		{"batchEmbedContents on an OpenAI channel keeps input order", "batchEmbedContents",
			`{"requests":[{"model":"models/emb-x","content":{"parts":[{"text":"a"}]}},{"model":"models/emb-x","content":{"parts":[{"text":"b"}]}}]}`, 1, "/v1/embeddings",
			func(t *testing.T, got seenRequest, answer string) {
				if gjson.Get(answer, "embeddings.1.values.0").Float() != 1.5 || gjson.Get(answer, "embeddings.0.values.0").Float() != 0.5 {
					t.Errorf("answer %s", answer)
				}
			}, func() int64 { return 1000 }},
		{"batchEmbedContents on a Gemini channel passes through with the model mapped", "batchEmbedContents",
			`{"requests":[{"model":"models/emb-x","content":{"parts":[{"text":"a b c"}]}}]}`, 24, "/v1beta/models/emb-x-mapped:batchEmbedContents",
			func(t *testing.T, got seenRequest, answer string) {
				if got.json("requests.0.model").String() != "models/emb-x-mapped" {
					t.Errorf("upstream body %s", got.raw)
				}
				if !gjson.Get(answer, "embeddings.0.values").IsArray() {
					t.Errorf("answer %s", answer)
				}
			}, func() int64 { return int64(tokenize.Count("emb-x", "a b c")) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("emb-x", store.ModelPrice{InputPerMTok: 2})
			f := &fakeEndpoints{}
			e.endpointChannel("main", f, tc.chType, "emb-x")
			before := e.balance()
			resp := e.post("/v1beta/models/emb-x:"+tc.action+"?key="+testKey, "", tc.body)
			answer := readAll(resp)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, answer)
			}
			got := f.last(t)
			if got.path != tc.wantPath {
				t.Fatalf("upstream path %s", got.path)
			}
			tc.check(t, got, answer)
			if charged, want := before-e.balance(), tc.wantCharge(); charged != want {
				t.Fatalf("charged %d, want %d", charged, want)
			}
		})
	}
}

func TestAltEmbedErrorsUseTheAlternateDialect(t *testing.T) {
	e := newEnv(t)
	e.price("emb-x", store.ModelPrice{InputPerMTok: 2})
	e.endpointChannel("main", &fakeEndpoints{}, 1, "emb-x")
	resp := e.post("/v1beta/models/emb-x:embedContent?key="+testKey, "", `{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]}}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 400 || gjsonOf(body, "error.code") != "400" || gjsonOf(body, "error.status") != "INVALID_ARGUMENT" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
}

func TestModerationsUseTheDefaultModelWhenNoneIsNamed(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.ModerationDefaultModel = "mod-default" })
	e.price("mod-default", store.ModelPrice{PerCall: 0.001})
	f := &fakeEndpoints{}
	e.endpointChannel("main", f, 1, "mod-default")
	before := e.balance()
	resp := e.post("/v1/moderations", testKey, `{"input":"I want to hug everyone"}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || gjsonOf(body, "results.0.flagged") != "false" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	if got := f.last(t); got.path != "/v1/moderations" || got.json("model").String() != "mod-default-mapped" {
		t.Fatalf("upstream got %s %s", got.path, got.raw)
	}
	if charged := before - e.balance(); charged != 500 {
		t.Fatalf("charged %d, want 500 (0.001 $ per call)", charged)
	}
	row, _ := e.lastConsume()
	if row.Model != "mod-default" {
		t.Fatalf("logged model %q", row.Model)
	}
}

func TestFreeModerationModelCostsNothing(t *testing.T) {
	e := newEnv(t)
	e.price("omni-moderation-latest", store.ModelPrice{Free: true})
	e.endpointChannel("main", &fakeEndpoints{}, 1, "omni-moderation-latest")
	before := e.balance()
	resp := e.post("/v1/moderations", testKey, `{"input":["a","b"]}`)
	readAll(resp)
	if resp.StatusCode != 200 || e.balance() != before {
		t.Fatalf("status %d, charged %d", resp.StatusCode, before-e.balance())
	}
}

func TestRerankIsForwardedWithIndicesAndBilledPerCallPlusTokens(t *testing.T) {
	e := newEnv(t)
	e.price("rerank-1", store.ModelPrice{PerCall: 0.002, InputPerMTok: 2})
	f := &fakeEndpoints{}
	ch := e.endpointChannel("main", f, 1, "rerank-1")
	before := e.balance()
	resp := e.post("/v1/rerank", testKey, `{"model":"rerank-1","query":"capital of France","documents":["Berlin","Paris"],"top_n":2}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || gjsonOf(body, "results.0.index") != "1" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	got := f.last(t)
	if got.path != "/v1/rerank" || got.auth != "Bearer "+ch.Key || got.json("documents.1").String() != "Paris" {
		t.Fatalf("upstream got %s %s", got.path, got.raw)
	}
	// 0.002 $ per call (1000) + 1000 total tokens at 2 $/Mtok (1000).
	if charged := before - e.balance(); charged != 2000 {
		t.Fatalf("charged %d, want 2000", charged)
	}
}

func TestRerankUsesTheChannelsRerankPath(t *testing.T) {
	e := newEnv(t)
	e.price("rerank-1", store.ModelPrice{PerCall: 0.002})
	f := &fakeEndpoints{}
	up := newFakeEndpoints(t, f)
	e.channel("jina", up.URL, func(c *store.Channel) {
		c.Models, c.Settings = []string{"rerank-1"}, map[string]any{"rerank_path": "v1/custom/rerank"}
	})
	resp := e.post("/v1/rerank", testKey, `{"model":"rerank-1","query":"q","documents":[{"text":"d"}]}`)
	readAll(resp)
	if resp.StatusCode != 200 || f.last(t).path != "/v1/custom/rerank" {
		t.Fatalf("status %d path %s", resp.StatusCode, f.last(t).path)
	}
}

func TestRerankRequiresQueryAndDocuments(t *testing.T) {
	e := newEnv(t)
	e.price("rerank-1", store.ModelPrice{PerCall: 0.002})
	f := &fakeEndpoints{}
	e.endpointChannel("main", f, 1, "rerank-1")
	cases := []struct{ name, body, param string }{
		{"missing query", `{"model":"rerank-1","documents":["a"]}`, "query"},
		{"blank query", `{"model":"rerank-1","query":"  ","documents":["a"]}`, "query"},
		{"query not text", `{"model":"rerank-1","query":3,"documents":["a"]}`, "query"},
		{"missing documents", `{"model":"rerank-1","query":"q"}`, "documents"},
		{"empty documents", `{"model":"rerank-1","query":"q","documents":[]}`, "documents"},
		{"documents not a list", `{"model":"rerank-1","query":"q","documents":"a"}`, "documents"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.post("/v1/rerank", testKey, tc.body)
			body := readJSON(t, resp)
			if resp.StatusCode != 400 || gjsonOf(body, "error.param") != tc.param || gjsonOf(body, "error.type") != "invalid_request_error" {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
		})
	}
	if f.calls() != 0 {
		t.Fatalf("an invalid rerank reached the upstream")
	}
}

func TestSearchGoesOnlyToChannelsThatSupportIt(t *testing.T) {
	e := newEnv(t)
	e.price("searcher", store.ModelPrice{PerCall: 0.01})
	plain := &fakeEndpoints{}
	e.endpointChannel("plain", plain, 1, "searcher")
	before := e.balance()
	resp := e.post("/v1/alpha/search", testKey, `{"model":"searcher","query":"golang"}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 400 || gjsonOf(body, "error.code") != "search_not_supported" || plain.calls() != 0 {
		t.Fatalf("status %d body %v, plain calls %d", resp.StatusCode, body, plain.calls())
	}
	if e.balance() != before {
		t.Fatalf("a refused search was charged")
	}
	capable := &fakeEndpoints{}
	up := newFakeEndpoints(t, capable)
	e.channel("search", up.URL, func(c *store.Channel) {
		c.Models, c.Settings = []string{"searcher"}, map[string]any{"supports_search": true}
	})
	resp = e.post("/v1/alpha/search", testKey, `{"model":"searcher","query":"golang"}`)
	body = readJSON(t, resp)
	if resp.StatusCode != 200 || gjsonOf(body, "results.0.title") != "Go" || capable.last(t).json("query").String() != "golang" || plain.calls() != 0 {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	if charged := before - e.balance(); charged != 5000 {
		t.Fatalf("charged %d, want 5000", charged)
	}
}

func gjsonOf(v map[string]any, path string) string {
	b, _ := json.Marshal(v)
	return gjson.GetBytes(b, path).String()
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func decodeFloat32s(t *testing.T, s string) []float32 {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw)%4 != 0 {
		t.Fatalf("not base64 float32s: %q", s)
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}
