package upstream

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol/golden"
)

func TestBatchFormFollowsTheProviderAndSettingsBatches(t *testing.T) {
	on := map[string]any{"batches": true}
	off := map[string]any{"batches": false}
	tests := []struct {
		name     string
		typ      int
		settings map[string]any
		want     BatchForm
	}{
		{"openai runs OpenAI-form batches", TypeOpenAI, nil, BatchOpenAI},
		{"azure runs OpenAI-form batches", TypeAzure, nil, BatchOpenAI},
		{"settings.batches false turns openai off", TypeOpenAI, off, ""},
		{"settings.batches false turns azure off", TypeAzure, off, ""},
		{"an OpenAI-compatible preset only when it says so", TypeDeepSeek, nil, ""},
		{"an OpenAI-compatible preset that says so", TypeDeepSeek, on, BatchOpenAI},
		{"a messages-wire channel that says so runs Message Batches", TypeAnthropic, on, BatchMessages},
		{"a messages-wire channel that does not say so", TypeAnthropic, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := Builtin(tc.typ)
			if got := a.(Batches).BatchForm(Target{Type: tc.typ, Settings: tc.settings}); got != tc.want {
				t.Fatalf("BatchForm = %q, want %q", got, tc.want)
			}
		})
	}
	if _, ok := any(Gemini{}).(Batches); ok {
		t.Fatal("the Gemini API adapter claims a batch API the gateway does not speak")
	}
}

// seen is one request a fake provider received.
type seen struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// recorder is a fake provider that keeps what it receives and answers 200.
func recorder(t *testing.T) (*httptest.Server, func() seen) {
	var mu sync.Mutex
	var last seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body}
		mu.Unlock()
		_, _ = w.Write([]byte(`{"id":"x"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() seen { mu.Lock(); defer mu.Unlock(); return last }
}

var batchInput = [][]byte{
	[]byte(`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"max_tokens":10}}`),
	[]byte(`{"custom_id":"b \"2\"","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"yo"}]}}`),
}

func inputLines(each func([]byte) error) error {
	for _, l := range batchInput {
		if err := each(append([]byte(nil), l...)); err != nil {
			return err
		}
	}
	return nil
}

// batchOps builds every request of a provider's batch API for a batch
// of /v1/chat/completions with id "b1" and the file "f1".
var batchOps = []struct {
	name  string
	build func(a Batches, t Target) (*http.Request, error)
}{
	{"upload", func(a Batches, t Target) (*http.Request, error) {
		return a.UploadBatchInput(context.Background(), t, inputLines)
	}},
	{"create", func(a Batches, t Target) (*http.Request, error) {
		return a.CreateBatch(context.Background(), t, "/v1/chat/completions", "f1", inputLines)
	}},
	{"get", func(a Batches, t Target) (*http.Request, error) { return a.GetBatch(context.Background(), t, "b1") }},
	{"cancel", func(a Batches, t Target) (*http.Request, error) { return a.CancelBatch(context.Background(), t, "b1") }},
	{"results", func(a Batches, t Target) (*http.Request, error) {
		return a.BatchResults(context.Background(), t, "b1", "f1")
	}},
}

func TestBatchRequestsReachEachProvidersPathWithItsVersionAndAuth(t *testing.T) {
	srv, last := recorder(t)
	type want struct{ method, path, query string }
	tests := []struct {
		name       string
		target     Target
		auth       [2]string
		extra      map[string]string
		wants      map[string]want
		goldenName string
	}{
		{"openai", Target{Type: TypeOpenAI, BaseURL: srv.URL + "/v1", Key: "sk-up", Model: "gpt-4o-2024",
			Settings: map[string]any{"headers": map[string]any{"OpenAI-Organization": "org-1"}}},
			[2]string{"Authorization", "Bearer sk-up"}, map[string]string{"OpenAI-Organization": "org-1"},
			map[string]want{"upload": {"POST", "/v1/files", ""}, "create": {"POST", "/v1/batches", ""},
				"get": {"GET", "/v1/batches/b1", ""}, "cancel": {"POST", "/v1/batches/b1/cancel", ""},
				"results": {"GET", "/v1/files/f1/content", ""}}, "openai"},
		{"azure deployment API", Target{Type: TypeAzure, BaseURL: srv.URL, Key: "az-up", Model: "prod-4o",
			Settings: map[string]any{"api_version": "2025-03-01-preview"}},
			[2]string{"api-key", "az-up"}, nil,
			map[string]want{"upload": {"POST", "/openai/files", "api-version=2025-03-01-preview"},
				"create":  {"POST", "/openai/batches", "api-version=2025-03-01-preview"},
				"get":     {"GET", "/openai/batches/b1", "api-version=2025-03-01-preview"},
				"cancel":  {"POST", "/openai/batches/b1/cancel", "api-version=2025-03-01-preview"},
				"results": {"GET", "/openai/files/f1/content", "api-version=2025-03-01-preview"}}, "azure"},
		{"azure v1 API", Target{Type: TypeAzure, BaseURL: srv.URL, Key: "az-up", Model: "prod-4o",
			Settings: map[string]any{"api_version": "v1"}},
			[2]string{"api-key", "az-up"}, nil,
			map[string]want{"upload": {"POST", "/openai/v1/files", ""}, "create": {"POST", "/openai/v1/batches", ""},
				"get": {"GET", "/openai/v1/batches/b1", ""}, "cancel": {"POST", "/openai/v1/batches/b1/cancel", ""},
				"results": {"GET", "/openai/v1/files/f1/content", ""}}, "azure_v1"},
		{"messages", Target{Type: TypeAnthropic, BaseURL: srv.URL, Key: "ant-up", Model: "claude-up",
			Settings: map[string]any{"batches": true}},
			[2]string{"x-api-key", "ant-up"}, map[string]string{"anthropic-version": "2023-06-01"},
			map[string]want{"create": {"POST", "/v1/messages/batches", ""},
				"get":     {"GET", "/v1/messages/batches/b1", ""},
				"cancel":  {"POST", "/v1/messages/batches/b1/cancel", ""},
				"results": {"GET", "/v1/messages/batches/b1/results", ""}}, "messages"},
	}
	for _, tc := range tests {
		a, _ := Builtin(tc.target.Type)
		api := a.(Batches)
		for _, op := range batchOps {
			t.Run(tc.name+" "+op.name, func(t *testing.T) {
				req, err := op.build(api, tc.target)
				if err != nil {
					t.Fatal(err)
				}
				w, ok := tc.wants[op.name]
				if !ok {
					if req != nil {
						t.Fatalf("%s builds a request the provider has no use for: %s", op.name, req.URL)
					}
					return
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := last()
				if got.method != w.method || got.path != w.path || got.query != w.query {
					t.Fatalf("sent %s %s?%s, want %s %s?%s", got.method, got.path, got.query, w.method, w.path, w.query)
				}
				if v := got.header.Get(tc.auth[0]); v != tc.auth[1] {
					t.Errorf("%s = %q, want %q", tc.auth[0], v, tc.auth[1])
				}
				for k, v := range tc.extra {
					if got.header.Get(k) != v {
						t.Errorf("header %s = %q, want %q", k, got.header.Get(k), v)
					}
				}
				if tc.auth[0] != "Authorization" && got.header.Get("Authorization") != "" {
					t.Errorf("the key also travelled as Authorization")
				}
				if op.name == "upload" || op.name == "create" {
					golden.Compare(t, filepath.Join("testdata", "batches", tc.goldenName+"_"+op.name+".golden"), sentBody(t, got))
				}
			})
		}
	}
}

// sentBody is what a provider received, as golden files keep it: JSON
// indented, a multipart upload as its purpose and its file's lines.
func sentBody(t *testing.T, s seen) []byte {
	mt, params, _ := mime.ParseMediaType(s.header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return golden.Indent(t, s.body)
	}
	var out bytes.Buffer
	mr := multipart.NewReader(bytes.NewReader(s.body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out.Bytes()
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		out.WriteString("--- " + p.FormName() + " " + p.FileName() + "\n")
		out.Write(b)
		if !bytes.HasSuffix(b, []byte("\n")) {
			out.WriteByte('\n')
		}
	}
}

func TestBatchAnswersAreReadAsTheProviderSpellsThem(t *testing.T) {
	tests := []struct {
		fixture  string
		typ      int
		endpoint string
	}{
		{"openai_batch_in_progress.json", TypeOpenAI, ""},
		{"openai_batch_completed.json", TypeOpenAI, ""},
		{"openai_batch_failed.json", TypeAzure, ""},
		{"messages_batch_in_progress.json", TypeAnthropic, ""},
		{"messages_batch_ended.json", TypeAnthropic, ""},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			path := filepath.Join("testdata", "batches", tc.fixture)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := Builtin(tc.typ)
			st, err := a.(Batches).DecodeBatch(raw)
			if err != nil {
				t.Fatal(err)
			}
			golden.Compare(t, golden.Path(path, ".golden.json"), golden.JSON(t, st))
		})
	}
}

func TestBatchResultLinesCarryTheUsageTheirWiresCodecReads(t *testing.T) {
	tests := []struct {
		fixture  string
		typ      int
		endpoint string
	}{
		{"openai_results_chat.jsonl", TypeOpenAI, "/v1/chat/completions"},
		{"openai_results_responses.jsonl", TypeAzure, "/v1/responses"},
		{"openai_results_embeddings.jsonl", TypeOpenAI, "/v1/embeddings"},
		{"messages_results.jsonl", TypeAnthropic, "/v1/messages"},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			path := filepath.Join("testdata", "batches", tc.fixture)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := Builtin(tc.typ)
			type line struct {
				BatchResult
				Body string
				Read bool
			}
			var out []line
			for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				r, ok := a.(Batches).DecodeBatchResult(tc.endpoint, []byte(l))
				out = append(out, line{BatchResult: r, Body: string(r.Body), Read: ok})
			}
			golden.Compare(t, golden.Path(path, ".golden.json"), golden.JSON(t, out))
		})
	}
}

// FuzzBatchAnswers feeds provider answers and result lines to every batch
// form's readers: none may panic, and a line read as answered never
// carries a negative count into billing.
func FuzzBatchAnswers(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "batches", "*.json*"))
	for _, n := range names {
		raw, _ := os.ReadFile(n)
		for _, l := range bytes.Split(raw, []byte("\n")) {
			f.Add(l)
		}
	}
	forms := []Batches{OpenAICompatible{}, Azure{}, Anthropic{}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, a := range forms {
			_, _ = a.DecodeBatch(raw)
			for _, ep := range []string{"/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/messages"} {
				r, ok := a.DecodeBatchResult(ep, raw)
				u := r.Usage
				if ok && (u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || u.ReasoningTokens < 0) {
					t.Fatalf("negative usage %+v from %q", u, raw)
				}
			}
		}
	})
}
