package vertex

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

func chat(t *testing.T, tg upstream.Target, body string, stream bool, in http.Header) *http.Request {
	t.Helper()
	if in == nil {
		in = http.Header{}
	}
	req, err := Adapter{}.Chat(context.Background(), tg, []byte(body), stream, in)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	return req
}

func readBody(t *testing.T, req *http.Request) string {
	t.Helper()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCallsGoToTheProjectAndLocationOfTheModelsPublisher(t *testing.T) {
	acct := newTestAccount(t, 3600)
	cases := []struct {
		name     string
		region   any
		model    string
		stream   bool
		settings map[string]any
		want     string
	}{
		{"global by default, Gemini", nil, "gemini-2.5-flash", false, nil,
			"https://aiplatform.googleapis.com/v1/projects/proj-a/locations/global/publishers/google/models/gemini-2.5-flash:generateContent"},
		{"global has no location in its host", "global", "gemini-2.5-flash", true, nil,
			"https://aiplatform.googleapis.com/v1/projects/proj-a/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"a region names its host", "us-central1", "models/gemini-2.5-pro", false, nil,
			"https://us-central1-aiplatform.googleapis.com/v1/projects/proj-a/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent"},
		{"Claude is Anthropic's", "us-east5", "claude-sonnet-4@20250514", false, nil,
			"https://us-east5-aiplatform.googleapis.com/v1/projects/proj-a/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"},
		{"Claude streams on streamRawPredict", "europe-west1", "claude-3-5-haiku@20241022", true, nil,
			"https://europe-west1-aiplatform.googleapis.com/v1/projects/proj-a/locations/europe-west1/publishers/anthropic/models/claude-3-5-haiku@20241022:streamRawPredict"},
		{"settings.project overrides the account's", "global", "gemini-2.5-flash", false, map[string]any{"project": "other-proj"},
			"https://aiplatform.googleapis.com/v1/projects/other-proj/locations/global/publishers/google/models/gemini-2.5-flash:generateContent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := map[string]any{}
			for k, v := range tc.settings {
				s[k] = v
			}
			if tc.region != nil {
				s["region"] = tc.region
			}
			tg := upstream.Target{Type: upstream.TypeVertex, Key: acct.key(), Settings: s, Model: tc.model}
			req := chat(t, tg, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"messages":[]}`, tc.stream, nil)
			if got := req.URL.String(); got != tc.want {
				t.Fatalf("URL\n got %s\nwant %s", got, tc.want)
			}
			if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s with Content-Type %q", req.Method, req.Header.Get("Content-Type"))
			}
			if !strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ya29.token-") || req.Header.Get("x-goog-api-key") != "" {
				t.Fatalf("credentials: Authorization %q x-goog-api-key %q", req.Header.Get("Authorization"), req.Header.Get("x-goog-api-key"))
			}
		})
	}
}

func TestCodecFollowsTheModel(t *testing.T) {
	for model, want := range map[string]protocol.Format{
		"claude-opus-4-1@20250805": protocol.Anthropic, "Claude-3-haiku@20240307": protocol.Anthropic,
		"gemini-2.5-flash": protocol.Gemini, "gemini-embedding-001": protocol.Gemini,
	} {
		if got := (Adapter{}).Codec(upstream.Target{Model: model}).Format(); got != want {
			t.Errorf("%s: %s, want %s", model, got, want)
		}
	}
}

func TestBaseURLReplacesTheHostWithoutDoublingTheVersion(t *testing.T) {
	acct := newTestAccount(t, 3600)
	for _, base := range []string{"https://proxy.example/vertex", "https://proxy.example/vertex/", "https://proxy.example/vertex/v1"} {
		tg := upstream.Target{Key: acct.key(), BaseURL: base, Settings: map[string]any{"region": "us-central1"}, Model: "gemini-2.5-flash"}
		want := "https://proxy.example/vertex/v1/projects/proj-a/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
		if got := chat(t, tg, `{}`, false, nil).URL.String(); got != want {
			t.Errorf("base %s:\n got %s\nwant %s", base, got, want)
		}
	}
}

func TestExpressModeSendsTheAPIKeyToTheGlobalPublisherPath(t *testing.T) {
	tg := upstream.Target{Key: " AQ.express-key-123 \n", Settings: map[string]any{"region": "us-central1", "headers": map[string]any{"X-Extra": "1"}}, Model: "gemini-2.5-flash"}
	req := chat(t, tg, `{"contents":[]}`, true, nil)
	want := "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	if got := req.URL.String(); got != want {
		t.Fatalf("URL\n got %s\nwant %s", got, want)
	}
	if req.Header.Get("x-goog-api-key") != "AQ.express-key-123" || req.Header.Get("Authorization") != "" {
		t.Fatalf("x-goog-api-key %q Authorization %q", req.Header.Get("x-goog-api-key"), req.Header.Get("Authorization"))
	}
	if req.Header.Get("X-Extra") != "1" || req.Header.Get("Accept") != "text/event-stream" {
		t.Fatalf("settings.headers or Accept missing: %v", req.Header)
	}
	tg.Model = "claude-sonnet-4@20250514"
	_, err := Adapter{}.Chat(context.Background(), tg, []byte(`{"model":"x","messages":[]}`), false, http.Header{})
	if err == nil || !strings.Contains(err.Error(), "service account") || strings.Contains(err.Error(), "express-key") {
		t.Fatalf("Claude in express mode: %v", err)
	}
}

func TestClaudeBodyLosesItsModelAndCarriesVertexVersion(t *testing.T) {
	acct := newTestAccount(t, 3600)
	tg := upstream.Target{Key: acct.key(), Settings: map[string]any{"region": "us-east5"}, Model: "claude-sonnet-4@20250514"}
	in := http.Header{"Anthropic-Beta": {"interleaved-thinking-2025-05-14"}, "Anthropic-Version": {"2023-06-01"}, "X-Api-Key": {"client-key"}}
	body := `{"model":"claude-sonnet-4@20250514","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`
	for _, stream := range []bool{false, true} {
		req := chat(t, tg, body, stream, in)
		got := readBody(t, req)
		if gjson.Get(got, "model").Exists() {
			t.Errorf("stream %v: the body still names the model: %s", stream, got)
		}
		if v := gjson.Get(got, "anthropic_version").String(); v != "vertex-2023-10-16" {
			t.Errorf("stream %v: anthropic_version %q", stream, v)
		}
		if s := gjson.Get(got, "stream"); s.Bool() != stream || (!stream && s.Exists()) {
			t.Errorf("stream %v: body stream is %s", stream, s.Raw)
		}
		if gjson.Get(got, "max_tokens").Int() != 64 || gjson.Get(got, "tools.0.name").String() != "f" || gjson.Get(got, "messages.0.content").String() != "hi" {
			t.Errorf("stream %v: the rest of the body changed: %s", stream, got)
		}
		if req.Header.Get("anthropic-beta") != "interleaved-thinking-2025-05-14" {
			t.Errorf("anthropic-beta %q", req.Header.Get("anthropic-beta"))
		}
		if req.Header.Get("anthropic-version") != "" || req.Header.Get("x-api-key") != "" {
			t.Errorf("client headers leaked: %v", req.Header)
		}
	}
	if _, err := (Adapter{}).Chat(context.Background(), tg, []byte(`[1,2]`), false, http.Header{}); err == nil {
		t.Error("a body that is not an object was sent")
	}
}

// fakeVertex answers generateContent for the one token it accepts.
func fakeVertex(t *testing.T, token func() string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token() {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
			return
		}
		if r.URL.Path != "/v1/projects/proj-a/locations/global/publishers/google/models/gemini-2.5-flash:generateContent" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestServiceAccountTokenIsExchangedOnceAndAcceptedByVertex(t *testing.T) {
	acct := newTestAccount(t, 3600)
	up := fakeVertex(t, func() string { return "ya29.token-1" })
	tg := upstream.Target{Key: acct.key(), BaseURL: up.URL, Model: "gemini-2.5-flash", Client: up.Client()}
	for i := 0; i < 3; i++ {
		req := chat(t, tg, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, false, nil)
		resp, err := up.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("call %d: Vertex answered %d", i, resp.StatusCode)
		}
	}
	if n := acct.tokens.exchanges.Load(); n != 1 {
		t.Fatalf("%d token exchanges for three calls, want 1", n)
	}
}

func TestConcurrentCallsShareOneTokenExchange(t *testing.T) {
	acct := newTestAccount(t, 3600)
	acct.tokens.gate = make(chan struct{})
	tg := upstream.Target{Key: acct.key(), Model: "gemini-2.5-flash"}
	var wg sync.WaitGroup
	auths := make([]string, 50)
	errs := make([]error, 50)
	for i := range 50 {
		wg.Go(func() {
			req, err := Adapter{}.Chat(context.Background(), tg, []byte(`{}`), false, http.Header{})
			errs[i] = err
			if err == nil {
				auths[i] = req.Header.Get("Authorization")
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // let every call reach the token source
	close(acct.tokens.gate)
	wg.Wait()
	for i := range 50 {
		if errs[i] != nil || auths[i] != "Bearer ya29.token-1" {
			t.Fatalf("call %d: %v %q", i, errs[i], auths[i])
		}
	}
	if n := acct.tokens.exchanges.Load(); n != 1 {
		t.Fatalf("%d token exchanges for 50 concurrent calls, want 1", n)
	}
}

func TestTokenIsRefreshedShortlyBeforeItExpires(t *testing.T) {
	// A token of 30 seconds is already inside the minute before expiry in
	// which it is replaced, so every call exchanges anew.
	acct := newTestAccount(t, 30)
	tg := upstream.Target{Key: acct.key(), Model: "gemini-2.5-flash"}
	first := chat(t, tg, `{}`, false, nil).Header.Get("Authorization")
	second := chat(t, tg, `{}`, false, nil).Header.Get("Authorization")
	if first != "Bearer ya29.token-1" || second != "Bearer ya29.token-2" || acct.tokens.exchanges.Load() != 2 {
		t.Fatalf("tokens %q then %q after %d exchanges, want a fresh one each time", first, second, acct.tokens.exchanges.Load())
	}
}

func TestACancelledCallDoesNotSpoilTheTokenForTheNext(t *testing.T) {
	acct := newTestAccount(t, 3600)
	acct.tokens.gate = make(chan struct{})
	tg := upstream.Target{Key: acct.key(), Model: "gemini-2.5-flash"}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Adapter{}.Chat(ctx, tg, []byte(`{}`), false, http.Header{})
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	close(acct.tokens.gate)
	if got := chat(t, tg, `{}`, false, nil).Header.Get("Authorization"); got != "Bearer ya29.token-1" {
		t.Fatalf("the next call got %q", got)
	}
	if n := acct.tokens.exchanges.Load(); n != 1 {
		t.Fatalf("%d exchanges, want the one the cancelled call started", n)
	}
}

func TestRefusedTokenExchangeIsAChannelErrorWithoutSecrets(t *testing.T) {
	acct := newTestAccount(t, 3600)
	acct.tokens.refuse = http.StatusBadRequest
	tg := upstream.Target{Key: acct.key(), Model: "gemini-2.5-flash"}
	_, err := Adapter{}.Chat(context.Background(), tg, []byte(`{}`), false, http.Header{})
	if err == nil {
		t.Fatal("a refused exchange built a request")
	}
	var se *upstream.SettingError
	if errors.As(err, &se) {
		t.Fatalf("a refused exchange is the channel's trouble at call time, not a settings error: %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "400") || strings.Contains(msg, "PRIVATE KEY") || strings.Contains(msg, "echo of") || strings.Contains(msg, acct.email) {
		t.Fatalf("error %q", msg)
	}
}

func TestAccountCacheIsBounded(t *testing.T) {
	_, pemKey := newRSAKey(t)
	client := &http.Client{}
	for i := range maxAccounts + 20 {
		key := `{"type":"service_account","project_id":"p","client_email":"sa` + string(rune('a'+i%26)) + strings.Repeat("x", i) + `@p.iam","private_key":` + jsonString(pemKey) + `}`
		if _, err := accounts.get(key, client); err != nil {
			t.Fatal(err)
		}
	}
	accounts.mu.Lock()
	n := len(accounts.m)
	accounts.mu.Unlock()
	if n > maxAccounts {
		t.Fatalf("%d cached accounts, bound %d", n, maxAccounts)
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
