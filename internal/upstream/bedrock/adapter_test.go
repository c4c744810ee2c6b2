package bedrock

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/upstream"
	"github.com/turnpike-gw/turnpike/internal/upstream/bedrock/bedrocktest"
)

var testCreds = bedrocktest.Credentials{
	AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	SessionToken: "session-token-example", APIKey: "ABSKexampleapikey", Region: "eu-west-3",
}

const claude = "anthropic.claude-3-5-sonnet-20240620-v1:0"

func fake(t *testing.T) *bedrocktest.Server {
	return bedrocktest.New(t, testCreds, func(c bedrocktest.Call) bedrocktest.Reply {
		if c.Stream {
			return bedrocktest.Reply{Events: []bedrocktest.Event{
				{Type: "messageStart", Payload: `{"role":"assistant"}`},
				{Type: "contentBlockDelta", Payload: `{"contentBlockIndex":0,"delta":{"text":"hi"}}`},
				{Type: "messageStop", Payload: `{"stopReason":"end_turn"}`},
			}}
		}
		return bedrocktest.Reply{JSON: `{"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":1}}`}
	})
}

func target(base, key string, settings map[string]any) upstream.Target {
	if settings == nil {
		settings = map[string]any{"region": testCreds.Region, "session_token": testCreds.SessionToken}
	}
	return upstream.Target{Type: upstream.TypeAWS, BaseURL: base, Key: key, Settings: settings, Model: claude}
}

func send(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// A chat call is signed so that Bedrock, recomputing the signature from
// what it received, accepts it: the model id escaped in the path (its ':'
// as %3A), the session token and the channel's extra headers signed.
func TestChatIsSignedSoBedrockAcceptsIt(t *testing.T) {
	srv := fake(t)
	tg := target(srv.URL, testCreds.AccessKeyID+"|"+testCreds.SecretAccessKey, nil)
	tg.Settings["headers"] = map[string]any{"X-Team": "research"}
	for _, stream := range []bool{false, true} {
		req, err := Adapter{}.Chat(context.Background(), tg, []byte(`{"messages":[]}`), stream, http.Header{"Authorization": {"Bearer client-key"}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(req.URL.EscapedPath(), "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse") {
			t.Fatalf("path %s", req.URL.EscapedPath())
		}
		resp, body := send(t, req)
		if resp.StatusCode != 200 {
			t.Fatalf("stream=%v: %d %s", stream, resp.StatusCode, body)
		}
		if !strings.Contains(req.Header.Get("Authorization"), "x-team") {
			t.Fatalf("settings.headers not signed: %s", req.Header.Get("Authorization"))
		}
	}
	calls := srv.Calls()
	if len(calls) != 2 || calls[0].Model != claude || calls[0].Stream || !calls[1].Stream {
		t.Fatalf("calls %+v", calls)
	}
	if calls[0].Header.Get("X-Amz-Security-Token") != testCreds.SessionToken || calls[1].Header.Get("X-Team") != "research" {
		t.Fatalf("headers %v", calls[1].Header)
	}
}

// The fake is a real check: a changed body, a wrong secret, a missing
// session token or a stale clock are refused with 403 as AWS refuses them.
func TestBedrockRefusesWhatWasNotSignedRight(t *testing.T) {
	srv := fake(t)
	good := testCreds.AccessKeyID + "|" + testCreds.SecretAccessKey
	cases := []struct {
		name  string
		build func() *http.Request
	}{
		{"a body changed after signing", func() *http.Request {
			req, _ := Adapter{}.Chat(context.Background(), target(srv.URL, good, nil), []byte(`{"a":1}`), false, nil)
			req.Body = io.NopCloser(strings.NewReader(`{"a":2}`))
			return req
		}},
		{"a wrong secret", func() *http.Request {
			req, _ := Adapter{}.Chat(context.Background(), target(srv.URL, testCreds.AccessKeyID+"|wrong", nil), []byte(`{}`), false, nil)
			return req
		}},
		{"no session token", func() *http.Request {
			req, _ := Adapter{}.Chat(context.Background(), target(srv.URL, good, map[string]any{"region": testCreds.Region}), []byte(`{}`), false, nil)
			return req
		}},
		{"another region", func() *http.Request {
			req, _ := Adapter{}.Chat(context.Background(), target(srv.URL, good, map[string]any{"region": "us-east-1", "session_token": testCreds.SessionToken}), []byte(`{}`), false, nil)
			return req
		}},
		{"a clock an hour off", func() *http.Request {
			a := Adapter{Now: func() time.Time { return time.Now().Add(-time.Hour) }}
			req, _ := a.Chat(context.Background(), target(srv.URL, good, nil), []byte(`{}`), false, nil)
			return req
		}},
		{"a header changed after signing", func() *http.Request {
			req, _ := Adapter{}.Chat(context.Background(), target(srv.URL, good, nil), []byte(`{}`), false, nil)
			req.Header.Set("Content-Type", "application/json; charset=utf-8")
			return req
		}},
		{"a wrong API key", func() *http.Request {
			req, _ := Adapter{}.Chat(context.Background(), target(srv.URL, "ABSKnotthekey", nil), []byte(`{}`), false, nil)
			return req
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, tc.build())
			if resp.StatusCode != 403 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			e := Adapter{}.DecodeError(resp.StatusCode, resp.Header, body)
			if e.Retry != ir.RetryNextAndCool {
				t.Fatalf("refusal decoded as %+v", e)
			}
		})
	}
	if len(srv.Calls()) != 0 {
		t.Fatal("a refused call was answered")
	}
}

// A key without '|' is a Bedrock API key, sent as a Bearer token unsigned.
func TestAPIKeyIsSentAsBearerWithoutSigning(t *testing.T) {
	srv := fake(t)
	req, err := Adapter{}.Chat(context.Background(), target(srv.URL, testCreds.APIKey, map[string]any{"region": "eu-west-3"}), []byte(`{}`), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Authorization") != "Bearer "+testCreds.APIKey || req.Header.Get("X-Amz-Date") != "" {
		t.Fatalf("headers %v", req.Header)
	}
	if resp, body := send(t, req); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// Without base_url the region's public runtime endpoint is used; the
// region must be a region name, since it becomes part of the host.
func TestDefaultAddressIsTheRegionsRuntime(t *testing.T) {
	req, err := Adapter{}.Chat(context.Background(), target("", "A|B", map[string]any{"region": "ap-southeast-2"}), []byte(`{}`), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.URL.String(); got != "https://bedrock-runtime.ap-southeast-2.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream" {
		t.Fatalf("url %s", got)
	}
	for _, region := range []string{"", "evil.com/x", "us-east-1.attacker"} {
		if _, err := (Adapter{}).Chat(context.Background(), target("", "A|B", map[string]any{"region": region}), nil, false, nil); err == nil {
			t.Fatalf("region %q accepted", region)
		}
	}
}

func TestInferenceProfileARNIsOnePathSegment(t *testing.T) {
	got := EscapeModel("arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0")
	if strings.Contains(got, "/") || !strings.HasPrefix(got, "arn%3Aaws%3Abedrock") {
		t.Fatalf("escaped %s", got)
	}
}

func TestListModelsAsksTheControlPlaneSigned(t *testing.T) {
	srv := fake(t)
	srv.Models = []string{"anthropic.claude-3-haiku-20240307-v1:0", "amazon.nova-lite-v1:0"}
	srv.Profiles = []string{"us.anthropic.claude-sonnet-4-20250514-v1:0", "us.amazon.nova-pro-v1:0", "eu.meta.llama3-2-3b-instruct-v1:0"}
	got, err := Adapter{}.ListModels(context.Background(), target(srv.URL, testCreds.AccessKeyID+"|"+testCreds.SecretAccessKey, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]string(nil), srv.Models...), srv.Profiles...); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("models %v, want %v (every profile page)", got, want)
	}
	if _, err := (Adapter{}).ListModels(context.Background(), target(srv.URL, testCreds.AccessKeyID+"|wrong", nil)); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("refused list: %v", err)
	}
}

func TestControlPlaneAddressFollowsTheRuntimeAddress(t *testing.T) {
	cases := map[string]string{
		"": "https://bedrock.us-west-2.amazonaws.com",
		"https://bedrock-runtime.us-west-2.amazonaws.com":                "https://bedrock.us-west-2.amazonaws.com",
		"https://bedrock-runtime-fips.us-west-2.amazonaws.com":           "https://bedrock-fips.us-west-2.amazonaws.com",
		"https://vpce-0abc.bedrock-runtime.us-west-2.vpce.amazonaws.com": "https://vpce-0abc.bedrock.us-west-2.vpce.amazonaws.com",
		"http://127.0.0.1:8080":                                          "http://127.0.0.1:8080",
		"https://proxy.example.com/aws":                                  "https://proxy.example.com/aws",
	}
	for base, want := range cases {
		if got := ControlBase(upstream.Target{BaseURL: base}, "us-west-2"); got != want {
			t.Errorf("%q → %q, want %q", base, got, want)
		}
	}
}

func TestValidatorNamesWhatToFix(t *testing.T) {
	good := map[string]any{"region": "us-east-1"}
	cases := []struct {
		name     string
		key      string
		settings map[string]any
		field    string
	}{
		{"no region", "A|B", map[string]any{}, "settings.region"},
		{"an empty region", "A|B", map[string]any{"region": ""}, "settings.region"},
		{"a region that is not a string", "A|B", map[string]any{"region": 1.0}, "settings.region"},
		{"a region that is not a region", "A|B", map[string]any{"region": "Virginia"}, "settings.region"},
		{"no key", "", good, "key"},
		{"no secret", "AKIDEXAMPLE|", good, "key"},
		{"no access key", "|secret", good, "key"},
		{"three parts", "A|B|C", good, "key"},
		{"a space in an API key", "ABSK abc", good, "key"},
		{"a session token that is not a string", "A|B", map[string]any{"region": "us-east-1", "session_token": 5.0}, "settings.session_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Adapter{}.Validate(upstream.Target{Key: tc.key, Settings: tc.settings})
			var se *upstream.SettingError
			if !errors.As(err, &se) || se.Field != tc.field {
				t.Fatalf("got %v, want an error naming %s", err, tc.field)
			}
			if tc.key != "" && len(tc.key) > 3 && strings.Contains(se.Message, tc.key) {
				t.Fatalf("message repeats the key: %s", se.Message)
			}
		})
	}
	for _, ok := range []upstream.Target{
		{Key: "AKIDEXAMPLE|wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", Settings: good},
		{Key: "ABSKQmVkcm9ja0FQSUtleQ==", Settings: map[string]any{"region": "us-gov-west-1", "session_token": "tok"}},
	} {
		if err := (Adapter{}).Validate(ok); err != nil {
			t.Errorf("refused a good channel: %v", err)
		}
	}
}

func frames(t *testing.T, msgs ...eventstream.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, m := range msgs {
		if err := enc.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// Frames read as events named by :event-type; an exception frame ends the
// stream with the upstream's error, mapped by its exception type.
func TestEventReaderReadsFramesAndExceptions(t *testing.T) {
	raw := frames(t,
		bedrocktest.Frame(bedrocktest.Event{Type: "messageStart", Payload: `{"role":"assistant"}`}),
		bedrocktest.Frame(bedrocktest.Event{Type: "contentBlockDelta", Payload: `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`}),
		bedrocktest.Frame(bedrocktest.Event{Type: "throttlingException", Payload: `{"message":"Too many tokens, please wait before trying again."}`, Exception: true}),
	)
	r := NewEventReader(bytes.NewReader(raw))
	var names []string
	for {
		name, data, err := r.NextEvent()
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 429 || !strings.Contains(e.Message, "Too many tokens") {
				t.Fatalf("exception read as %v", err)
			}
			break
		}
		names = append(names, string(name)+" "+string(data))
	}
	if len(names) != 2 || names[1] != `contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"Hel"}}` {
		t.Fatalf("events %q", names)
	}
}

func TestEventReaderEndsCleanlyOnlyBetweenFrames(t *testing.T) {
	raw := frames(t, bedrocktest.Frame(bedrocktest.Event{Type: "messageStop", Payload: `{"stopReason":"end_turn"}`}))
	r := NewEventReader(bytes.NewReader(raw))
	if _, _, err := r.NextEvent(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.NextEvent(); err != io.EOF {
		t.Fatalf("end of stream read as %v", err)
	}
	for name, bad := range map[string][]byte{
		"cut inside a frame":     raw[:len(raw)-3],
		"cut inside a prelude":   raw[:5],
		"a corrupted payload":    append(append([]byte(nil), raw[:len(raw)-6]...), 'x', raw[len(raw)-5], raw[len(raw)-4], raw[len(raw)-3], raw[len(raw)-2], raw[len(raw)-1]),
		"a length past the cap":  {0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"a length below a frame": {0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0},
		"headers past the frame": {0, 0, 0, 20, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		if _, _, err := NewEventReader(bytes.NewReader(bad)).NextEvent(); !errors.Is(err, ErrBadFrame) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Signing keys are never reused across secrets: after a call signed with
// the right secret, the same access key id with a wrong secret (a channel
// being corrected, or another channel) is refused, not signed with the
// key derived before.
func TestAnotherSecretForTheSameAccessKeyIsNeverSignedWithTheFormerKey(t *testing.T) {
	srv := fake(t)
	for _, tc := range []struct {
		secret string
		want   int
	}{{testCreds.SecretAccessKey, 200}, {"not-the-secret", 403}, {testCreds.SecretAccessKey, 200}} {
		req, err := Adapter{}.Chat(context.Background(), target(srv.URL, testCreds.AccessKeyID+"|"+tc.secret, nil), []byte(`{}`), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, body := send(t, req); resp.StatusCode != tc.want {
			t.Fatalf("secret %q: %d %s", tc.secret, resp.StatusCode, body)
		}
	}
}

// Embeddings go to InvokeModel in the model's own body, signed like chat;
// Titan's token count is the usage, Cohere's answer has none.
func TestEmbeddingsUseTheModelsOwnBody(t *testing.T) {
	srv := bedrocktest.New(t, testCreds, func(c bedrocktest.Call) bedrocktest.Reply {
		if strings.HasPrefix(c.Model, "cohere.") {
			return bedrocktest.Reply{JSON: `{"id":"x","embeddings":[[0.1,0.2],[0.3,0.4]],"response_type":"embeddings_floats","texts":["a","b"]}`}
		}
		return bedrocktest.Reply{JSON: `{"embedding":[0.5,-0.25,1],"inputTextTokenCount":7}`}
	})
	key := testCreds.AccessKeyID + "|" + testCreds.SecretAccessKey
	cases := []struct {
		model string
		texts []string
		dims  int
		body  string
		vecs  int
		usage int
	}{
		{"amazon.titan-embed-text-v2:0", []string{"hello"}, 256, `{"dimensions":256,"inputText":"hello"}`, 1, 7},
		{"cohere.embed-multilingual-v3", []string{"a", "b"}, 0, `{"input_type":"search_document","texts":["a","b"]}`, 2, 0},
	}
	for _, tc := range cases {
		tg := target(srv.URL, key, nil)
		tg.Model = tc.model
		req, err := Adapter{}.EmbedRequest(context.Background(), tg, tc.texts, tc.dims)
		if err != nil {
			t.Fatal(err)
		}
		resp, body := send(t, req)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.model, resp.StatusCode, body)
		}
		last := srv.Calls()[len(srv.Calls())-1]
		if last.Action != "invoke" || last.Model != tc.model || string(last.Body) != tc.body {
			t.Fatalf("%s: fake got %s %s %s", tc.model, last.Action, last.Model, last.Body)
		}
		vecs, u, err := Adapter{}.DecodeEmbeddings(body)
		if err != nil || len(vecs) != tc.vecs || u.InputTokens != tc.usage {
			t.Fatalf("%s: %v %v %v", tc.model, vecs, u, err)
		}
	}
	for _, bad := range []struct {
		model string
		texts []string
		dims  int
		param string
	}{
		{"amazon.titan-embed-text-v2:0", []string{"a", "b"}, 0, "input"},
		{"amazon.titan-embed-text-v1", []string{"a"}, 512, "dimensions"},
		{"cohere.embed-english-v3", []string{"a"}, 512, "dimensions"},
		{"meta.llama3-8b-instruct-v1:0", []string{"a"}, 0, "model"},
	} {
		tg := target(srv.URL, key, nil)
		tg.Model = bad.model
		_, err := Adapter{}.EmbedRequest(context.Background(), tg, bad.texts, bad.dims)
		var e *ir.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Param != bad.param {
			t.Errorf("%s %v %d: %v", bad.model, bad.texts, bad.dims, err)
		}
	}
	if _, _, err := (Adapter{}).DecodeEmbeddings([]byte(`{"embeddings":{"float":[[1,"x"]]}}`)); err == nil {
		t.Fatal("a non-number in a vector was accepted")
	}
	if v, _, err := (Adapter{}).DecodeEmbeddings([]byte(`{"embeddings":{"float":[[1,2]]}}`)); err != nil || len(v) != 1 {
		t.Fatalf("typed Cohere answer: %v %v", v, err)
	}
}
