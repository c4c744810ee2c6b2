package app_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// The Vertex AI fake below checks what Vertex AI checks: a Bearer access
// token that its own token endpoint issued for a JWT signed by the service
// account's key; Gemini bodies on the publisher's generateContent paths and
// Claude bodies without a model and with anthropic_version on rawPredict.

const (
	vertexProject   = "proj-vx"
	vertexRegion    = "us-central1"
	vertexEmail     = "gateway@proj-vx.iam.gserviceaccount.com"
	vertexToken     = "ya29.vertex-app-token"
	vertexGemini    = "gemini-2.5-flash"
	vertexClaudeIn  = "claude-sonnet-4"
	vertexClaudeOut = "claude-sonnet-4@20250514"
)

// Usage the fake reports, and prices that make each call's charge exact:
// 500,000 quota units per dollar.
//
//	Gemini: (1200 × $2 + 300 × $4) / 1M = $0.0036 → 1800
//	Claude: (1000 × $3 + 200 × $15) / 1M = $0.006 → 3000
const (
	geminiPrompt, geminiOutput = 1200, 300
	claudeInput, claudeOutput  = 1000, 200
	geminiCharge, claudeCharge = 1800, 3000
)

type vertexFake struct {
	*httptest.Server
	pub       *rsa.PublicKey
	exchanges atomic.Int64
	calls     sync.Map // path → *atomic.Int64
	mu        sync.Mutex
	problems  []string
}

func (f *vertexFake) fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.problems = append(f.problems, msg)
	f.mu.Unlock()
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":"INVALID_ARGUMENT"}}`, status, msg)
}

func newVertexFake(t *testing.T) (*vertexFake, string) {
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(pk)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	f := &vertexFake{pub: &pk.PublicKey}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.Close()
		for _, p := range f.problems {
			t.Errorf("fake Vertex AI: %s", p)
		}
	})
	key, _ := json.MarshalIndent(map[string]string{"type": "service_account", "project_id": vertexProject,
		"private_key_id": "k1", "private_key": pemKey, "client_email": vertexEmail, "client_id": "42",
		"token_uri": f.URL + "/token", "secret_marker": secretMarker}, "", "  ")
	return f, string(key)
}

func (f *vertexFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		f.token(w, r)
		return
	}
	key := r.URL.Path
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	n, _ := f.calls.LoadOrStore(key, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if r.Header.Get("Authorization") != "Bearer "+vertexToken {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	prefix := "/v1/projects/" + vertexProject + "/locations/" + vertexRegion + "/publishers/"
	switch key {
	case prefix + "google/models/" + vertexGemini + ":generateContent":
		f.gemini(w, body, false)
	case prefix + "google/models/" + vertexGemini + ":streamGenerateContent?alt=sse":
		f.gemini(w, body, true)
	case prefix + "anthropic/models/" + vertexClaudeOut + ":rawPredict":
		f.claude(w, r, body, false)
	case prefix + "anthropic/models/" + vertexClaudeOut + ":streamRawPredict":
		f.claude(w, r, body, true)
	case prefix + "google/models/text-embedding-005:predict":
		b := gjson.ParseBytes(body)
		if b.Get("instances.#").Int() != 2 || b.Get("instances.1.content").String() != "a dog" || b.Get("parameters.outputDimensionality").Int() != 2 {
			f.fail(w, http.StatusBadRequest, "not a predict body for two texts of two values: %s", body)
			return
		}
		io.WriteString(w, `{"predictions":[{"embeddings":{"values":[0.5,-0.25],"statistics":{"token_count":3,"truncated":false}}},`+
			`{"embeddings":{"values":[0.125,1],"statistics":{"token_count":4,"truncated":false}}}],"metadata":{"billableCharacterCount":9}}`)
	default:
		f.fail(w, http.StatusNotFound, "no such Vertex AI path %s", key)
	}
}

// token checks the JWT-bearer grant: signed by the account's key, issued
// by its client_email for this endpoint, asking for cloud-platform.
func (f *vertexFake) token(w http.ResponseWriter, r *http.Request) {
	f.exchanges.Add(1)
	_ = r.ParseForm()
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || len(parts) != 3 {
		f.fail(w, http.StatusBadRequest, "not a JWT-bearer grant")
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(f.pub, crypto.SHA256, digest[:], sig) != nil {
		f.fail(w, http.StatusBadRequest, "the assertion is not signed by the account's key")
		return
	}
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	c := gjson.ParseBytes(claims)
	if c.Get("iss").String() != vertexEmail || c.Get("aud").String() != f.URL+"/token" ||
		c.Get("scope").String() != "https://www.googleapis.com/auth/cloud-platform" || c.Get("exp").Int()-c.Get("iat").Int() > 3600 {
		f.fail(w, http.StatusBadRequest, "claims %s", claims)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"access_token":"`+vertexToken+`","expires_in":3599,"token_type":"Bearer"}`)
}

func (f *vertexFake) gemini(w http.ResponseWriter, body []byte, stream bool) {
	b := gjson.ParseBytes(body)
	if b.Get("model").Exists() || b.Get("contents.0.parts.0.text").String() == "" ||
		b.Get("tools.0.functionDeclarations.0.name").String() != "get_weather" {
		f.fail(w, http.StatusBadRequest, "not a generateContent body with the tool: %s", body)
		return
	}
	call := `{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},"finishReason":"STOP","index":0}`
	usage := fmt.Sprintf(`"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":%d,"totalTokenCount":%d}`, geminiPrompt, geminiOutput, geminiPrompt+geminiOutput)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[`+call+`],`+usage+`,"modelVersion":"`+vertexGemini+`"}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Checking. "}]},"index":0}],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":2,"totalTokenCount":1202}}`+"\r\n\r\n")
	w.(http.Flusher).Flush()
	io.WriteString(w, `data: {"candidates":[`+call+`],`+usage+`}`+"\r\n\r\n")
}

func (f *vertexFake) claude(w http.ResponseWriter, r *http.Request, body []byte, stream bool) {
	b := gjson.ParseBytes(body)
	switch {
	case b.Get("model").Exists():
		f.fail(w, http.StatusBadRequest, "the rawPredict body names a model: %s", body)
		return
	case b.Get("anthropic_version").String() != "vertex-2023-10-16":
		f.fail(w, http.StatusBadRequest, "anthropic_version is %q", b.Get("anthropic_version").String())
		return
	case b.Get("stream").Bool() != stream:
		f.fail(w, http.StatusBadRequest, "stream %v on the %v action", b.Get("stream").Bool(), stream)
		return
	case b.Get("tools.0.name").String() != "get_weather" || b.Get("max_tokens").Int() == 0:
		f.fail(w, http.StatusBadRequest, "not a messages body with the tool: %s", body)
		return
	case r.Header.Get("x-api-key") != "" || r.Header.Get("x-goog-api-key") != "":
		f.fail(w, http.StatusBadRequest, "a client key reached Vertex AI")
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_vrtx_1","type":"message","role":"assistant","model":"%s","content":[{"type":"tool_use","id":"toolu_vrtx_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}`,
			vertexClaudeOut, claudeInput, claudeOutput)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	events := []string{
		`message_start`, fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_vrtx_2","type":"message","role":"assistant","model":"%s","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, vertexClaudeOut, claudeInput),
		`content_block_start`, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_vrtx_2","name":"get_weather","input":{}}}`,
		`content_block_delta`, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
		`content_block_delta`, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
		`content_block_stop`, `{"type":"content_block_stop","index":0}`,
		`message_delta`, fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":%d}}`, claudeOutput),
		`message_stop`, `{"type":"message_stop"}`,
	}
	for i := 0; i < len(events); i += 2 {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", events[i], events[i+1])
		w.(http.Flusher).Flush()
	}
}

// vertexSurface is one client surface's call with a tool, and the check
// that its answer (regular or streamed) carries the tool call.
type vertexSurface struct {
	name string
	send func(t *testing.T, g *testkit.Gateway, model string, stream bool) *http.Response
}

const vertexKey = "sk-vertex-client"

func vertexSurfaces() []vertexSurface {
	return []vertexSurface{
		{"openai", func(t *testing.T, g *testkit.Gateway, model string, stream bool) *http.Response {
			return post(t, g.URL+"/v1/chat/completions", map[string]string{"Authorization": "Bearer " + vertexKey},
				fmt.Sprintf(`{"model":%q,"stream":%v,"max_tokens":256,"messages":[{"role":"user","content":"Weather in Paris?"}],`+
					`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`, model, stream))
		}},
		{"messages", func(t *testing.T, g *testkit.Gateway, model string, stream bool) *http.Response {
			return post(t, g.URL+"/v1/messages", map[string]string{"x-api-key": vertexKey, "anthropic-version": "2023-06-01"},
				fmt.Sprintf(`{"model":%q,"stream":%v,"max_tokens":256,"messages":[{"role":"user","content":"Weather in Paris?"}],`+
					`"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}`, model, stream))
		}},
		{"alternate-native", func(t *testing.T, g *testkit.Gateway, model string, stream bool) *http.Response {
			action := "generateContent"
			if stream {
				action = "streamGenerateContent?alt=sse"
			}
			return post(t, g.URL+"/v1beta/models/"+model+":"+action, map[string]string{"x-goog-api-key": vertexKey},
				`{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],"generationConfig":{"maxOutputTokens":256},`+
					`"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]}`)
		}},
	}
}

// toolCalled checks that an answer of the surface calls get_weather for
// Paris: the fields of a regular answer, the events of a stream.
func toolCalled(surface string, stream bool, body []byte) bool {
	s := string(body)
	if stream {
		switch surface {
		case "openai":
			return strings.Contains(s, `"name":"get_weather"`) && strings.Contains(s, `Paris`) && strings.Contains(s, "data: [DONE]")
		case "messages":
			return strings.Contains(s, "event: content_block_start") && strings.Contains(s, `"type":"tool_use"`) &&
				strings.Contains(s, `input_json_delta`) && strings.Contains(s, `Paris`) && strings.Contains(s, "event: message_stop")
		default:
			return strings.Contains(s, `"functionCall":{`) && strings.Contains(s, `"get_weather"`) && strings.Contains(s, `Paris`)
		}
	}
	b := gjson.ParseBytes(body)
	switch surface {
	case "openai":
		c := b.Get("choices.0.message.tool_calls.0.function")
		return c.Get("name").String() == "get_weather" && gjson.Get(c.Get("arguments").String(), "city").String() == "Paris" &&
			b.Get("choices.0.finish_reason").String() == "tool_calls"
	case "messages":
		c := b.Get(`content.#(type=="tool_use")`)
		return c.Get("name").String() == "get_weather" && c.Get("input.city").String() == "Paris" && b.Get("stop_reason").String() == "tool_use"
	default:
		c := b.Get("candidates.0.content.parts.#(functionCall).functionCall")
		return c.Get("name").String() == "get_weather" && c.Get("args.city").String() == "Paris"
	}
}

func TestVertexChannelServesGeminiAndClaudeOnEverySurfaceBilledExactly(t *testing.T) {
	fake, key := newVertexFake(t)
	g := testkit.Start(t,
		testkit.WithRootToken(healthRoot),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "vx", User: "alice", Key: vertexKey}),
		testkit.WithModels(map[string]config.SeedPrice{
			vertexGemini:   {InputPerMTok: 2, OutputPerMTok: 4},
			vertexClaudeIn: {InputPerMTok: 3, OutputPerMTok: 15},
		}))
	// The key file is pasted as Google hands it out, over many lines.
	code, body := g.Do(t, "POST", "/api/channels", healthRoot, map[string]any{
		"name": "vertex", "type": "vertex", "base_url": fake.URL, "key": key,
		"models": []string{vertexGemini, vertexClaudeIn}, "groups": []string{"default"},
		"model_mapping": map[string]string{vertexClaudeIn: vertexClaudeOut},
		"settings":      map[string]any{"region": vertexRegion},
	})
	if code != 200 {
		t.Fatalf("creating the vertex channel: %d %v", code, body)
	}
	if strings.Contains(fmt.Sprint(body), "PRIVATE KEY") || strings.Contains(fmt.Sprint(body), secretMarker) {
		t.Fatalf("the channel's answer shows its key: %v", body)
	}
	before := userQuota(t, g)

	want := map[string]int64{}
	for _, model := range []string{vertexGemini, vertexClaudeIn} {
		for _, s := range vertexSurfaces() {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/stream=%v", model, s.name, stream)
				resp := s.send(t, g, model, stream)
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !toolCalled(s.name, stream, raw) {
					t.Fatalf("%s: %d %s", name, resp.StatusCode, raw)
				}
				if strings.Contains(string(raw), vertexToken) {
					t.Fatalf("%s: the access token reached the client", name)
				}
				want[model]++
			}
		}
	}

	var rows []any
	if !testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
		_, logs := g.Do(t, "GET", "/api/logs?type=consume&page_size=100", healthRoot, nil)
		rows, _ = logs["items"].([]any)
		return len(rows) == 12
	}) {
		t.Fatalf("%d consume rows, want 12", len(rows))
	}
	for _, it := range rows {
		row := it.(map[string]any)
		var charge, in, out int64
		switch row["model"] {
		case vertexGemini:
			charge, in, out = geminiCharge, geminiPrompt, geminiOutput
		case vertexClaudeIn:
			charge, in, out = claudeCharge, claudeInput, claudeOutput
		default:
			t.Fatalf("a row for model %v", row["model"])
		}
		if int64(row["quota"].(float64)) != charge || int64(row["prompt_tokens"].(float64)) != in || int64(row["completion_tokens"].(float64)) != out {
			t.Errorf("row %v: quota %v tokens %v/%v, want %d for %d/%d", row["model"], row["quota"], row["prompt_tokens"], row["completion_tokens"], charge, in, out)
		}
	}
	if spent, wantSpent := before-userQuota(t, g), 6*int64(geminiCharge+claudeCharge); spent != wantSpent {
		t.Fatalf("the balance went down by %d, want %d", spent, wantSpent)
	}
	if n := fake.exchanges.Load(); n != 1 {
		t.Fatalf("%d token exchanges for 12 calls, want one token reused", n)
	}
	prefix := "/v1/projects/" + vertexProject + "/locations/" + vertexRegion + "/publishers/"
	for _, p := range []string{
		prefix + "google/models/" + vertexGemini + ":generateContent",
		prefix + "google/models/" + vertexGemini + ":streamGenerateContent?alt=sse",
		prefix + "anthropic/models/" + vertexClaudeOut + ":rawPredict",
		prefix + "anthropic/models/" + vertexClaudeOut + ":streamRawPredict",
	} {
		n, ok := fake.calls.Load(p)
		if !ok || n.(*atomic.Int64).Load() != 3 {
			t.Errorf("%s was called %v times, want once per surface", p, n)
		}
	}
	if log := g.Log(); strings.Contains(log, vertexToken) || strings.Contains(log, "PRIVATE KEY") || strings.Contains(log, secretMarker) {
		t.Fatal("the gateway logged the access token or the key")
	}
}

func TestVertexChannelWithAnUnusableKeyIsRefusedNamingTheField(t *testing.T) {
	g := testkit.Start(t, testkit.WithRootToken(healthRoot))
	for _, tc := range []struct{ key, field, says string }{
		{`{"type":"service_account","client_email":"a@b.iam","project_id":"p"}`, "key", "no private_key"},
		{`{"type":"service_account","client_email":"a@b.iam","project_id":"p","private_key":"-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n"}`, "key", "private_key"},
		{"one key\nand another with spaces", "key", "without spaces"},
	} {
		code, body := g.Do(t, "POST", "/api/channels", healthRoot, map[string]any{
			"name": "vx", "type": "vertex", "key": tc.key, "models": []string{vertexGemini}})
		msg := fmt.Sprint(body)
		if code != 400 || !strings.Contains(msg, tc.field) || !strings.Contains(msg, tc.says) || strings.Contains(msg, "a@b.iam") || strings.Contains(msg, "not a key") {
			t.Errorf("key %.20q…: %d %v, want 400 naming %s saying %q", tc.key, code, body, tc.field, tc.says)
		}
	}
}

func TestVertexTokenRefusalIsAnUpstreamFailureWithoutSecrets(t *testing.T) {
	fake, key := newVertexFake(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature: %s"}`, r.PostForm.Get("assertion"))
	}))
	t.Cleanup(refusing.Close)
	key = strings.Replace(key, fake.URL+"/token", refusing.URL+"/token", 1)
	g := testkit.Start(t,
		testkit.WithRootToken(healthRoot),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "vx", User: "alice", Key: vertexKey}),
		testkit.WithModels(map[string]config.SeedPrice{vertexGemini: {InputPerMTok: 2, OutputPerMTok: 4}}),
		testkit.WithChannels(config.SeedChannel{Name: "vertex", Type: "vertex", BaseURL: fake.URL, Key: key,
			Models: []string{vertexGemini}, Groups: []string{"default"}, Settings: map[string]any{"region": vertexRegion}}))
	resp := vertexSurfaces()[0].send(t, g, vertexGemini, false)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || strings.Contains(string(raw), "JWT") || strings.Contains(string(raw), secretMarker) {
		t.Fatalf("answered %d %s, want a 502 that shows nothing of the exchange", resp.StatusCode, raw)
	}
	if _, ok := fake.calls.Load("/v1/projects/" + vertexProject + "/locations/" + vertexRegion + "/publishers/google/models/" + vertexGemini + ":generateContent"); ok {
		t.Fatal("Vertex AI was called without a token")
	}
	if log := g.Log(); strings.Contains(log, "PRIVATE KEY") || strings.Contains(log, secretMarker) || strings.Contains(log, "JWT Signature") {
		t.Fatal("the gateway logged the key or the token endpoint's answer")
	}
}

func TestVertexEmbeddingsArePredictionsBilledByTheirTokenCounts(t *testing.T) {
	fake, key := newVertexFake(t)
	g := testkit.Start(t,
		testkit.WithRootToken(healthRoot),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "vx", User: "alice", Key: vertexKey}),
		// 7 tokens × $1000 per million × 500,000 quota per dollar = 3500.
		testkit.WithModels(map[string]config.SeedPrice{"text-embedding-005": {InputPerMTok: 1000}}),
		testkit.WithChannels(config.SeedChannel{Name: "vertex", Type: "vertex", BaseURL: fake.URL, Key: key,
			Models: []string{"text-embedding-005"}, Groups: []string{"default"}, Settings: map[string]any{"region": vertexRegion}}))
	before := userQuota(t, g)
	resp := post(t, g.URL+"/v1/embeddings", map[string]string{"Authorization": "Bearer " + vertexKey},
		`{"model":"text-embedding-005","input":["a cat","a dog"],"dimensions":2}`)
	b := readJSON(t, resp)
	if resp.StatusCode != 200 || fmt.Sprint(b["data"]) != "[map[embedding:[0.5 -0.25] index:0 object:embedding] map[embedding:[0.125 1] index:1 object:embedding]]" {
		t.Fatalf("%d %v", resp.StatusCode, b)
	}
	if u, _ := b["usage"].(map[string]any); u["prompt_tokens"] != float64(7) {
		t.Fatalf("usage %v, want the 7 tokens Vertex AI counted", b["usage"])
	}
	if !testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool { return before-userQuota(t, g) == 3500 }) {
		t.Fatalf("the balance went down by %d, want 3500", before-userQuota(t, g))
	}
}
