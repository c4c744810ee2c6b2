package vertex

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// saKey renders a service-account key with fields changed (nil removes).
func saKey(t *testing.T, pemKey string, change map[string]any) string {
	t.Helper()
	m := map[string]any{"type": "service_account", "project_id": "proj-a", "private_key_id": "kid-1", "private_key": pemKey,
		"client_email": "gateway@proj-a.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token"}
	for k, v := range change {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestValidatorNamesWhatIsWrongWithoutRepeatingTheKey(t *testing.T) {
	_, pemKey := newRSAKey(t)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	garbled := strings.Replace(pemKey, "\n", "\nAAAA", 3)
	cases := []struct {
		name      string
		key       string
		settings  map[string]any
		field     string
		mentions  string
		forbidden []string
	}{
		{"a service account", saKey(t, pemKey, nil), nil, "", "", nil},
		{"a pretty-printed key file", "\n" + saKey(t, pemKey, nil) + "\n", map[string]any{"region": "us-central1"}, "", "", nil},
		{"no type, as the task plugins take it", saKey(t, pemKey, map[string]any{"type": nil}), nil, "", "", nil},
		{"an http token_uri (a self-hosted or test endpoint)", saKey(t, pemKey, map[string]any{"token_uri": "http://127.0.0.1:9/token"}), nil, "", "", nil},
		{"no token_uri means Google's", saKey(t, pemKey, map[string]any{"token_uri": nil}), nil, "", "", nil},
		{"no project_id but settings.project", saKey(t, pemKey, map[string]any{"project_id": nil}), map[string]any{"project": "proj-b"}, "", "", nil},
		{"an express-mode API key", "AQ.Ab8RN6Lexpress", map[string]any{"region": "global"}, "", "", nil},
		{"no key", "  \n", nil, "key", "is required", nil},
		{"no private_key", saKey(t, pemKey, map[string]any{"private_key": nil}), nil, "key", "has no private_key", nil},
		{"no client_email", saKey(t, pemKey, map[string]any{"client_email": nil}), nil, "key", "has no client_email", nil},
		{"a private_key that is not PEM", saKey(t, pemKey, map[string]any{"private_key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"}), nil, "key", "not a PEM", []string{"MIIEvQ"}},
		{"a garbled private_key", saKey(t, garbled, nil), nil, "key", "RSA private key", []string{"AAAA", "PRIVATE KEY"}},
		{"an EC private_key", saKey(t, ecPEM, nil), nil, "key", "not an RSA key", []string{"PRIVATE KEY"}},
		{"a token_uri that is not a URL", saKey(t, pemKey, map[string]any{"token_uri": "file:///etc/passwd"}), nil, "key", "token_uri", []string{"passwd"}},
		{"another kind of Google credential", saKey(t, pemKey, map[string]any{"type": "authorized_user"}), nil, "key", "service_account", nil},
		{"broken JSON", `{"type":"service_account","private_key":"-----BEGIN`, nil, "key", "not a readable", []string{"BEGIN"}},
		{"two API keys on a line", "AQ.first AQ.second", nil, "key", "without spaces", []string{"AQ."}},
		{"a service account without a project", saKey(t, pemKey, map[string]any{"project_id": nil}), nil, "settings.project", "project_id", nil},
		{"a region that cannot be a host name", saKey(t, pemKey, nil), map[string]any{"region": "us-central1.evil.example/"}, "settings.region", "location", nil},
		{"a region that is not text", saKey(t, pemKey, nil), map[string]any{"region": 5}, "settings.region", "location", nil},
		{"a project with a slash", saKey(t, pemKey, nil), map[string]any{"project": "a/b"}, "settings.project", "project ID", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Adapter{}.Validate(upstream.Target{Type: upstream.TypeVertex, Key: tc.key, Settings: tc.settings})
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var se *upstream.SettingError
			if !errors.As(err, &se) || se.Field != tc.field || !strings.Contains(se.Message, tc.mentions) {
				t.Fatalf("got %v, want %s saying %q", err, tc.field, tc.mentions)
			}
			for _, f := range append(tc.forbidden, "gateway@proj-a") {
				if strings.Contains(err.Error(), f) {
					t.Fatalf("the error repeats part of the key (%q): %v", f, err)
				}
			}
		})
	}
}

func TestEmbeddingsUsePredictAndSumTheTokenCounts(t *testing.T) {
	acct := newTestAccount(t, 3600)
	tg := upstream.Target{Key: acct.key(), Settings: map[string]any{"region": "us-central1"}, Model: "text-embedding-005"}
	req, err := Adapter{}.EmbedRequest(context.Background(), tg, []string{"a cat", "a dog"}, 256)
	if err != nil {
		t.Fatal(err)
	}
	want := "https://us-central1-aiplatform.googleapis.com/v1/projects/proj-a/locations/us-central1/publishers/google/models/text-embedding-005:predict"
	if req.URL.String() != want || !strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ") {
		t.Fatalf("%s with %q", req.URL, req.Header.Get("Authorization"))
	}
	body := readBody(t, req)
	if body != `{"instances":[{"content":"a cat"},{"content":"a dog"}],"parameters":{"outputDimensionality":256}}` {
		t.Fatalf("body %s", body)
	}
	req, _ = Adapter{}.EmbedRequest(context.Background(), tg, []string{"x"}, 0)
	if b := readBody(t, req); gjson.Get(b, "parameters").Exists() {
		t.Fatalf("parameters without a size: %s", b)
	}

	vecs, u, err := Adapter{}.DecodeEmbeddings([]byte(`{"predictions":[
		{"embeddings":{"values":[0.1,-0.2],"statistics":{"token_count":3,"truncated":false}}},
		{"embeddings":{"values":[0.3,0.4],"statistics":{"token_count":4.0,"truncated":false}}}],
		"metadata":{"billableCharacterCount":10}}`))
	if err != nil || len(vecs) != 2 || vecs[1][1] != 0.4 || u.InputTokens != 7 {
		t.Fatalf("vectors %v usage %+v err %v", vecs, u, err)
	}
	for _, bad := range []string{`{}`, `{"predictions":[{"embeddings":{}}]}`, `[`, `{"predictions":[{}]}`} {
		if _, _, err := (Adapter{}).DecodeEmbeddings([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	if _, err := (Adapter{}).EmbedRequest(context.Background(), upstream.Target{Key: "AQ.express", Model: "text-embedding-005"}, []string{"x"}, 0); err == nil {
		t.Error("express mode has no :predict, yet a request was built")
	}
}

func TestClaudeTokenCountGoesToCountTokensWithTheModelInTheBody(t *testing.T) {
	acct := newTestAccount(t, 3600)
	tg := upstream.Target{Key: acct.key(), Settings: map[string]any{"region": "us-east5"}, Model: "claude-sonnet-4@20250514"}
	in := http.Header{"Anthropic-Beta": {"token-counting-2024-11-01"}}
	req, err := Adapter{}.CountTokens(context.Background(), tg, []byte(`{"model":"alias","messages":[{"role":"user","content":"hi"}]}`), in)
	if err != nil {
		t.Fatal(err)
	}
	want := "https://us-east5-aiplatform.googleapis.com/v1/projects/proj-a/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict"
	if req.URL.String() != want {
		t.Fatalf("URL %s", req.URL)
	}
	body := readBody(t, req)
	if gjson.Get(body, "model").String() != "claude-sonnet-4@20250514" || gjson.Get(body, "anthropic_version").String() != "vertex-2023-10-16" ||
		gjson.Get(body, "messages.0.content").String() != "hi" {
		t.Fatalf("body %s", body)
	}
	if req.Header.Get("anthropic-beta") != "token-counting-2024-11-01" {
		t.Fatalf("anthropic-beta %q", req.Header.Get("anthropic-beta"))
	}
	tg.Model = "gemini-2.5-flash"
	if _, err := (Adapter{}).CountTokens(context.Background(), tg, []byte(`{}`), in); err == nil {
		t.Fatal("a Gemini model was sent to Anthropic's count-tokens")
	}
}

func TestModelDiscoverySaysToEnterTheNames(t *testing.T) {
	_, err := Adapter{}.ListModels(context.Background(), upstream.Target{Key: "AQ.x"})
	if err == nil || !strings.Contains(err.Error(), "enter the model names") {
		t.Fatalf("got %v", err)
	}
}
