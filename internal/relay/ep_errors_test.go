package relay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const embedBody = `{"model":"emb-small","input":"hello"}`

func TestEndpointFailuresAreRetriedOnTheNextChannel(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		wantCooled bool
	}{
		{"server error", 500, false},
		{"rate limited cools at once", 429, true},
		{"request timeout", 408, false},
		{"bad channel credentials cool the channel down", 401, true},
		{"forbidden channel cools down", 403, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("emb-small", store.ModelPrice{InputPerMTok: 2})
			bad, good := &fakeEndpoints{status: tc.status}, &fakeEndpoints{}
			badCh := e.channel("bad", newFakeEndpoints(t, bad).URL, func(c *store.Channel) { c.Models, c.Priority = []string{"emb-small"}, 10 })
			e.endpointChannel("good", good, 1, "emb-small")
			before := e.balance()
			resp := e.post("/v1/embeddings", testKey, embedBody)
			body := readJSON(t, resp)
			if resp.StatusCode != 200 || bad.calls() != 1 || good.calls() != 1 {
				t.Fatalf("status %d body %v, bad %d good %d", resp.StatusCode, body, bad.calls(), good.calls())
			}
			if cooled := !e.router.Health.Routable(badCh.ID, 0); cooled != tc.wantCooled {
				t.Fatalf("cooling = %v, want %v", cooled, tc.wantCooled)
			}
			if charged := before - e.balance(); charged != 1000 {
				t.Fatalf("charged %d, want 1000", charged)
			}
		})
	}
}

func TestUnreachableAndSilentChannelsAreSkipped(t *testing.T) {
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer silent.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for name, url := range map[string]string{"unreachable": dead.URL, "silent past the first-byte timeout": silent.URL} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.FirstByteTimeout = 150 * time.Millisecond })
			e.price("tts-1", store.ModelPrice{PerCall: 0.001})
			e.channel("broken", url, func(c *store.Channel) { c.Models, c.Priority = []string{"tts-1"}, 10 })
			good := &fakeEndpoints{}
			e.endpointChannel("good", good, 1, "tts-1")
			resp := e.post("/v1/audio/speech", testKey, `{"model":"tts-1","input":"hi","voice":"alloy"}`)
			audio := readAll(resp)
			if resp.StatusCode != 200 || audio != speechAudio || good.calls() != 1 {
				t.Fatalf("status %d, %d bytes, good %d", resp.StatusCode, len(audio), good.calls())
			}
		})
	}
}

func TestClientErrorsFromTheUpstreamComeBackInTheOpenAIDialect(t *testing.T) {
	for name, typ := range map[string]int{"OpenAI channel": 1, "Gemini channel": 24} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.price("emb-small", store.ModelPrice{InputPerMTok: 2})
			bad, other := &fakeEndpoints{status: 400}, &fakeEndpoints{}
			e.channel("bad", newFakeEndpoints(t, bad).URL, func(c *store.Channel) { c.Type, c.Models, c.Priority = typ, []string{"emb-small"}, 10 })
			e.endpointChannel("other", other, 1, "emb-small")
			before := e.balance()
			resp := e.post("/v1/embeddings", testKey, embedBody)
			body := readJSON(t, resp)
			if resp.StatusCode != 400 || gjsonOf(body, "error.message") != "upstream says 400" || gjsonOf(body, "error.type") != "invalid_request_error" {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
			if other.calls() != 0 {
				t.Fatalf("a client error was retried on another channel")
			}
			e.flush()
			if e.balance() != before {
				t.Fatalf("a failed call was charged %d", before-e.balance())
			}
		})
	}
}

func TestEveryChannelFailingIsABadGatewayAndRefunded(t *testing.T) {
	e := newEnv(t)
	e.price("img-1", store.ModelPrice{PerCall: 0.04})
	a, b := &fakeEndpoints{status: 500}, &fakeEndpoints{status: 502}
	e.endpointChannel("a", a, 1, "img-1")
	e.endpointChannel("b", b, 1, "img-1")
	before := e.balance()
	resp := e.post("/v1/images/generations", testKey, `{"model":"img-1","prompt":"x"}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 502 || a.calls()+b.calls() != 2 {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	e.flush()
	if e.balance() != before {
		t.Fatalf("charged %d after every channel failed", before-e.balance())
	}
	logs, _, _ := e.st.Logs().List(context.Background(), store.LogFilter{Type: store.LogError}, store.Page{})
	if len(logs) != 1 || !strings.Contains(string(logs[0].Other), `"endpoint":"images_generations"`) {
		t.Fatalf("error rows %+v", logs)
	}
}

func TestEndpointRequestsAreCheckedBeforeAnyUpstreamCall(t *testing.T) {
	e := newEnv(t)
	e.price("emb-small", store.ModelPrice{InputPerMTok: 2})
	e.price("davinci-3", store.ModelPrice{InputPerMTok: 2})
	e.price("unserved", store.ModelPrice{InputPerMTok: 2})
	f := &fakeEndpoints{}
	e.endpointChannel("main", f, 1, "emb-small", "davinci-3", "no-price")
	limited := "sk-limited-key"
	tok := &store.Token{UserID: e.user.ID, Name: "l", KeyHash: auth.HashKey(limited), KeyMasked: auth.MaskKey(limited), Quota: -1,
		Status: store.StatusEnabled, Models: []string{"davinci-3"}}
	if err := e.st.Tokens().Create(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, key, body string
		status                int
		code, param           string
	}{
		{"no key", "/v1/embeddings", "", embedBody, 401, "invalid_api_key", ""},
		{"wrong key", "/v1/embeddings", "sk-nope", embedBody, 401, "invalid_api_key", ""},
		{"model outside the key's list", "/v1/embeddings", limited, embedBody, 403, "model_not_allowed", ""},
		{"unknown model", "/v1/embeddings", testKey, `{"model":"unserved","input":"a"}`, 404, "model_not_found", "model"},
		{"model without a price", "/v1/embeddings", testKey, `{"model":"no-price","input":"a"}`, 400, "model_price_error", ""},
		{"missing model", "/v1/embeddings", testKey, `{"input":"a"}`, 400, "missing_required_parameter", "model"},
		{"missing input", "/v1/embeddings", testKey, `{"model":"emb-small"}`, 400, "missing_required_parameter", "input"},
		{"empty input list", "/v1/embeddings", testKey, `{"model":"emb-small","input":[]}`, 400, "invalid_value", "input"},
		{"body is not JSON", "/v1/embeddings", testKey, `model=emb-small`, 400, "invalid_body", ""},
		{"body is a JSON array", "/v1/completions", testKey, `[1,2]`, 400, "invalid_body", ""},
		{"completion without prompt", "/v1/completions", testKey, `{"model":"davinci-3"}`, 400, "missing_required_parameter", "prompt"},
		{"completion without model", "/v1/completions", testKey, `{"prompt":"x"}`, 400, "missing_required_parameter", "model"},
		{"image without prompt", "/v1/images/generations", testKey, `{"model":"davinci-3"}`, 400, "missing_required_parameter", "prompt"},
		{"image count out of range", "/v1/images/generations", testKey, `{"model":"davinci-3","prompt":"x","n":0}`, 400, "invalid_value", "n"},
		{"speech without input", "/v1/audio/speech", testKey, `{"model":"davinci-3","voice":"alloy"}`, 400, "missing_required_parameter", "input"},
		{"moderation without input", "/v1/moderations", testKey, `{"model":"davinci-3"}`, 400, "missing_required_parameter", "input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.post(tc.path, tc.key, tc.body)
			body := readJSON(t, resp)
			if resp.StatusCode != tc.status || gjsonOf(body, "error.code") != tc.code || gjsonOf(body, "error.param") != tc.param {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
		})
	}
	if f.calls() != 0 {
		t.Fatalf("a rejected request reached the upstream")
	}
}

func TestOversizedAndMalformedBodiesAreRejectedCleanly(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BodyLimit = 4096 })
	e.price("whisper-1", store.ModelPrice{PerCall: 0.01})
	f := &fakeEndpoints{}
	e.endpointChannel("main", f, 1, "whisper-1")
	big, bigCT := multipartBody(t, map[string]string{"model": "whisper-1"}, map[string]string{"file": strings.Repeat("a", 8192)})
	good, goodCT := multipartBody(t, map[string]string{"model": "whisper-1"}, map[string]string{"file": "abc"})
	truncated := good.String()[:good.Len()-10]
	cases := []struct {
		name, path, ct, body string
		status               int
		code                 string
	}{
		{"JSON over the limit", "/v1/embeddings", "application/json", `{"model":"whisper-1","input":"` + strings.Repeat("a", 5000) + `"}`, 413, "request_too_large"},
		{"multipart over the limit", "/v1/audio/transcriptions", bigCT, big.String(), 413, "request_too_large"},
		{"multipart cut short", "/v1/audio/transcriptions", goodCT, truncated, 400, "invalid_multipart"},
		{"multipart without boundary", "/v1/audio/transcriptions", "multipart/form-data", good.String(), 400, "invalid_multipart"},
		{"multipart with a foreign boundary", "/v1/audio/transcriptions", "multipart/form-data; boundary=nope", good.String(), 400, "invalid_multipart"},
		{"part without a name", "/v1/audio/transcriptions", "multipart/form-data; boundary=b",
			"--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n", 400, "invalid_multipart"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.postWith(tc.path, tc.ct, strings.NewReader(tc.body))
			body := readJSON(t, resp)
			if resp.StatusCode != tc.status || gjsonOf(body, "error.code") != tc.code {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
		})
	}
	if f.calls() != 0 {
		t.Fatalf("a rejected body reached the upstream")
	}
}
