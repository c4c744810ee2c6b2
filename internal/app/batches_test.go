package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	batchRoot  = "root-token-for-batch-tests-0123456789"
	batchKey   = "sk-batch-alice"
	batchKey2  = "sk-batch-bob"
	batchModel = "bulk-model"
)

// batchUpstream is an OpenAI-compatible chat provider that answers after
// delay, fails a line whose prompt says "fail" with a 400, and records how
// many calls it served at once at most.
type batchUpstream struct {
	delay           time.Duration
	calls, inflight atomic.Int32
	mu              sync.Mutex
	maxInflight     int32
	release         chan struct{} // when set, each call waits for a token
}

func (u *batchUpstream) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer upstream-key" || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"wrong key or path"}}`, http.StatusUnauthorized)
			return
		}
		n := u.inflight.Add(1)
		defer u.inflight.Add(-1)
		u.mu.Lock()
		u.maxInflight = max(u.maxInflight, n)
		u.mu.Unlock()
		u.calls.Add(1)
		raw, _ := io.ReadAll(r.Body)
		if u.release != nil {
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		}
		time.Sleep(u.delay)
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(raw, []byte("fail")) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"the provider refuses this prompt","type":"invalid_request_error","code":"refused"}}`)
			return
		}
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"bulk-model","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (u *batchUpstream) peak() int32 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.maxInflight
}

// batchGateway seeds alice (quota) and bob, and one custom channel (a type
// without a provider batch API, so the gateway runs the lines) with
// settings.batch_concurrency conc. Each line costs 1000 input + 500 output
// tokens at 1 and 2 USD per Mtok: 0.002 USD = 1000 quota.
func batchGateway(t *testing.T, upURL string, conc int, quota int64, opts ...testkit.Option) *testkit.Gateway {
	weight := 1
	settings := map[string]any{}
	if conc > 0 {
		settings["batch_concurrency"] = conc
	}
	return testkit.Start(t, append([]testkit.Option{
		testkit.WithRootToken(batchRoot),
		testkit.WithPollInterval(100 * time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: quota},
			config.SeedUser{Username: "bob", Password: "bob-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "alice-key", User: "alice", Key: batchKey},
			config.SeedToken{Name: "bob-key", User: "bob", Key: batchKey2}),
		testkit.WithChannels(config.SeedChannel{Name: "bulk", Type: "custom", BaseURL: upURL, Key: "upstream-key",
			Models: []string{batchModel, "priceless"}, Groups: []string{"default"}, Weight: &weight, Settings: settings}),
		testkit.WithModels(map[string]config.SeedPrice{batchModel: {InputPerMTok: 1, OutputPerMTok: 2}}),
	}, opts...)...)
}

// upload sends content as a multipart file with purpose and returns the
// status and the answer.
func upload(t *testing.T, g *testkit.Gateway, key, purpose, name string, content []byte) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("purpose", purpose)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(content)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/files", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func content(t *testing.T, g *testkit.Gateway, key, id string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/v1/files/"+id+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func TestFilesRoundTripInOpenAIShapeAndStayWithTheirUser(t *testing.T) {
	g := batchGateway(t, "http://127.0.0.1:1", 0, 1_000_000)
	// Past one database chunk, and binary, so chunking and order show.
	data := bytes.Repeat([]byte("line of the file\x00\xff\n"), 150_000)
	code, f := upload(t, g, batchKey, "batch", "in.jsonl", data)
	if code != 200 {
		t.Fatalf("upload: %d %v", code, f)
	}
	id, _ := f["id"].(string)
	if !strings.HasPrefix(id, "file-") || f["object"] != "file" || f["bytes"] != float64(len(data)) || f["filename"] != "in.jsonl" ||
		f["purpose"] != "batch" || f["status"] != "processed" || f["created_at"] == nil {
		t.Fatalf("file object = %v", f)
	}
	if code, got := content(t, g, batchKey, id); code != 200 || got != string(data) {
		t.Fatalf("content: %d, %d bytes back of %d", code, len(got), len(data))
	}
	code, list := g.Do(t, "GET", "/v1/files", batchKey, nil)
	if items, _ := list["data"].([]any); code != 200 || list["object"] != "list" || len(items) != 1 {
		t.Fatalf("alice's list: %d %v", code, list)
	}
	if _, list := g.Do(t, "GET", "/v1/files", batchKey2, nil); len(list["data"].([]any)) != 0 {
		t.Fatalf("bob sees alice's files: %v", list)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/files/" + id}, {"GET", "/v1/files/" + id + "/content"}, {"DELETE", "/v1/files/" + id},
	} {
		code, body := g.Do(t, c.method, c.path, batchKey2, nil)
		if code != 404 || body["error"].(map[string]any)["message"] == nil {
			t.Errorf("bob %s %s: %d %v, want 404 in the OpenAI dialect", c.method, c.path, code, body)
		}
	}
	if code, _ := g.Do(t, "GET", "/v1/files", "", nil); code != 401 {
		t.Errorf("no key: %d", code)
	}
	code, del := g.Do(t, "DELETE", "/v1/files/"+id, batchKey, nil)
	if code != 200 || del["id"] != id || del["object"] != "file" || del["deleted"] != true {
		t.Fatalf("delete: %d %v", code, del)
	}
	if code, _ := g.Do(t, "GET", "/v1/files/"+id, batchKey, nil); code != 404 {
		t.Fatalf("deleted file answers %d", code)
	}
}

func TestFileUploadChecksSizeAndPurpose(t *testing.T) {
	g := batchGateway(t, "http://127.0.0.1:1", 0, 1_000_000, testkit.WithConfig(func(c *config.Config) { c.Files.MaxMB = 1 }))
	tests := []struct {
		name     string
		purpose  string
		size     int
		want     int
		wantCode string
	}{
		{"a file past files.max_mb is refused with 413", "batch", 1<<20 + 1, 413, "file_too_large"},
		{"a file at the limit is kept", "batch", 1 << 20, 200, ""},
		{"an unknown purpose is refused", "nonsense", 10, 400, "invalid_value"},
		{"a missing purpose is refused", "", 10, 400, "missing_required_parameter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := upload(t, g, batchKey, tc.purpose, "f.jsonl", bytes.Repeat([]byte("x"), tc.size))
			if code != tc.want {
				t.Fatalf("status %d, want %d: %v", code, tc.want, body)
			}
			if tc.wantCode != "" {
				e, _ := body["error"].(map[string]any)
				if e["code"] != tc.wantCode || e["type"] == nil {
					t.Fatalf("error = %v, want code %s in the OpenAI dialect", body, tc.wantCode)
				}
			}
		})
	}
	if _, list := g.Do(t, "GET", "/v1/files", batchKey, nil); len(list["data"].([]any)) != 1 {
		t.Fatalf("refused uploads left files: %v", list)
	}
}
