package cohere

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

func TestChatPostsToV2ChatWithTheKeyAsBearer(t *testing.T) {
	cases := []struct {
		name     string
		base     string
		settings map[string]any
		want     string
	}{
		{"public default", "", nil, "https://api.cohere.com/v2/chat"},
		{"an origin", "https://cohere.internal/", nil, "https://cohere.internal/v2/chat"},
		{"an address with the version", "https://cohere.internal/v2", nil, "https://cohere.internal/v2/chat"},
		{"a path prefix", "https://proxy.example", map[string]any{"path_prefix": "/cohere/v2"}, "https://proxy.example/cohere/v2/chat"},
		{"a prefix already in the address", "https://proxy.example/cohere/v2", map[string]any{"path_prefix": "/cohere/v2"}, "https://proxy.example/cohere/v2/chat"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := upstream.Target{Type: upstream.TypeCohere, BaseURL: tc.base, Key: "co-key", Settings: tc.settings, Model: "command-a-03-2025"}
			req, err := Adapter{}.Chat(context.Background(), tg, []byte(`{}`), false, http.Header{"Authorization": {"Bearer client-key"}})
			if err != nil {
				t.Fatal(err)
			}
			if req.Method != http.MethodPost || req.URL.String() != tc.want {
				t.Fatalf("%s %s, want POST %s", req.Method, req.URL, tc.want)
			}
			if req.Header.Get("Authorization") != "Bearer co-key" || req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Accept") != "application/json" {
				t.Fatalf("headers %v", req.Header)
			}
		})
	}
}

func TestAStreamingChatAsksForEventsAndCarriesTheChannelsHeaders(t *testing.T) {
	tg := upstream.Target{Key: "co-key", Settings: map[string]any{"headers": map[string]any{"X-Client-Name": "turnpike"}}}
	req, err := Adapter{}.Chat(context.Background(), tg, []byte(`{"stream":true}`), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Accept") != "text/event-stream" || req.Header.Get("X-Client-Name") != "turnpike" {
		t.Fatalf("headers %v", req.Header)
	}
}

func TestOnlyRerankIsServedAsAnOpenAIStylePath(t *testing.T) {
	for _, p := range []string{"/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/models", "/v1/images/generations", "/v1/responses", "/v1/realtime"} {
		if (Adapter{}).Serves(p) {
			t.Errorf("serves %s", p)
		}
	}
	if !(Adapter{}).Serves("/v1/rerank") {
		t.Fatal("rerank is not served")
	}
	if _, err := (Adapter{}).Endpoint(context.Background(), upstream.Target{Key: "k"}, http.MethodPost, "/v1/embeddings", strings.NewReader(`{}`), "application/json"); err == nil {
		t.Fatal("an endpoint other than rerank was built")
	}
}

func TestRerankGoesToV2RerankWithDocumentsAsText(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"model":"rerank-v3.5","query":"q","documents":["a","b"],"top_n":1}`, `{"model":"rerank-v3.5","query":"q","documents":["a","b"],"top_n":1}`},
		{`{"model":"rerank-v3.5","query":"q","documents":[{"text":"a"},"b",{"title":"t"}]}`, `{"model":"rerank-v3.5","query":"q","documents":["a","b","{\"title\":\"t\"}"]}`},
	}
	for _, tc := range cases {
		req, err := Adapter{}.Endpoint(context.Background(), upstream.Target{Key: "co-key"}, http.MethodPost, "/v1/rerank", strings.NewReader(tc.in), "application/json")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(req.Body)
		if req.URL.String() != "https://api.cohere.com/v2/rerank" || req.Header.Get("Authorization") != "Bearer co-key" || string(body) != tc.want {
			t.Fatalf("%s %v %s", req.URL, req.Header, body)
		}
	}
}

func TestEmbeddingsAskForFloatVectorsForTheConfiguredInputType(t *testing.T) {
	tg := upstream.Target{Key: "co-key", Model: "embed-v4.0"}
	req, err := Adapter{}.EmbedRequest(context.Background(), tg, []string{"a", "b"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	if req.URL.String() != "https://api.cohere.com/v2/embed" || string(body) != `{"embedding_types":["float"],"input_type":"search_document","model":"embed-v4.0","texts":["a","b"]}` {
		t.Fatalf("%s %s", req.URL, body)
	}
	tg.Settings = map[string]any{"input_type": "search_query"}
	req, _ = Adapter{}.EmbedRequest(context.Background(), tg, []string{"a"}, 256)
	body, _ = io.ReadAll(req.Body)
	if gjson.GetBytes(body, "input_type").Str != "search_query" || gjson.GetBytes(body, "output_dimension").Int() != 256 {
		t.Fatalf("%s", body)
	}
	_, err = Adapter{}.EmbedRequest(context.Background(), tg, make([]string, maxEmbedTexts+1), 0)
	var e *ir.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Param != "input" || e.Retry != ir.RetryNext {
		t.Fatalf("too many texts: %v", err)
	}
}

func TestEmbeddingAnswersYieldVectorsAndBilledTokens(t *testing.T) {
	vecs, u, err := Adapter{}.DecodeEmbeddings([]byte(`{"id":"x","embeddings":{"float":[[0.5,-1],[2,3]]},"texts":["a","b"],"meta":{"billed_units":{"input_tokens":7}}}`))
	if err != nil || len(vecs) != 2 || vecs[1][1] != 3 || u.InputTokens != 7 {
		t.Fatalf("%v %v %v", vecs, u, err)
	}
	for _, bad := range []string{`{}`, `{"embeddings":{"int8":[[1]]}}`, `nope`} {
		if _, _, err := (Adapter{}).DecodeEmbeddings([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

func TestModelsAreListedAcrossPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer co-key" {
			w.WriteHeader(401)
			return
		}
		if r.URL.Query().Get("page_token") == "" {
			io.WriteString(w, `{"models":[{"name":"command-a-03-2025","endpoints":["chat"]}],"next_page_token":"p2"}`)
			return
		}
		io.WriteString(w, `{"models":[{"name":"embed-v4.0","endpoints":["embed"]}]}`)
	}))
	defer srv.Close()
	got, err := Adapter{}.ListModels(context.Background(), upstream.Target{BaseURL: srv.URL, Key: "co-key", Client: srv.Client()})
	if err != nil || strings.Join(got, ",") != "command-a-03-2025,embed-v4.0" {
		t.Fatalf("%v %v", got, err)
	}
	_, err = Adapter{}.ListModels(context.Background(), upstream.Target{BaseURL: srv.URL, Key: "wrong", Client: srv.Client()})
	if err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("a refused list: %v", err)
	}
}

func TestChannelsWithoutAUsableKeyAreRefusedWhenSaved(t *testing.T) {
	cases := []struct {
		key      string
		settings map[string]any
		field    string
	}{
		{"", nil, "key"},
		{"Bearer abc123", nil, "key"},
		{"abc\t123", nil, "key"},
		{"abc123", map[string]any{"input_type": "documents"}, "settings.input_type"},
		{"abc123", map[string]any{"input_type": 3}, "settings.input_type"},
		{"abc123", map[string]any{"input_type": "clustering"}, ""},
		{"abc123", nil, ""},
	}
	for _, tc := range cases {
		err := Adapter{}.Validate(upstream.Target{Type: upstream.TypeCohere, Key: tc.key, Settings: tc.settings})
		var se *upstream.SettingError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%q %v refused: %v", tc.key, tc.settings, err)
		case tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field):
			t.Errorf("%q %v: got %v, want an error naming %s", tc.key, tc.settings, err, tc.field)
		case err != nil && tc.key != "" && strings.Contains(err.Error(), tc.key):
			t.Errorf("the error repeats the key: %v", err)
		}
	}
}
