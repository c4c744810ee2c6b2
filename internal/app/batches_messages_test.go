package app_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

func messagesCall(t *testing.T, g *testkit.Gateway, method, path string, body any) (int, map[string]any, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = strings.NewReader(string(raw))
	}
	req, _ := http.NewRequest(method, g.URL+path, rd)
	req.Header.Set("x-api-key", batchKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, string(raw)
}

func messageRequest(id, prompt string) map[string]any {
	return map[string]any{"custom_id": id, "params": map[string]any{"model": batchModel, "max_tokens": 600,
		"messages": []any{map[string]any{"role": "user", "content": prompt}}}}
}

func TestMessageBatchesRunOnTheSameMachineryAndEndWithResults(t *testing.T) {
	up := &batchUpstream{}
	g := batchGateway(t, up.serve(t).URL, 2, 1_000_000)
	before := balance(t, g)
	code, b, raw := messagesCall(t, g, "POST", "/v1/messages/batches", map[string]any{"requests": []any{
		messageRequest("m-1", "work"), messageRequest("m-2", "fail"), messageRequest("m-3", "work")}})
	if code != 200 || b["type"] != "message_batch" || b["processing_status"] != "in_progress" || !strings.HasPrefix(b["id"].(string), "msgbatch_") {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := b["id"].(string)
	testkit.WaitFor(20*time.Second, 50*time.Millisecond, func() bool {
		_, b, _ = messagesCall(t, g, "GET", "/v1/messages/batches/"+id, nil)
		return b["processing_status"] == "ended"
	})
	c, _ := b["request_counts"].(map[string]any)
	if b["processing_status"] != "ended" || c["succeeded"] != float64(2) || c["errored"] != float64(1) || c["processing"] != float64(0) ||
		b["ended_at"] == nil || b["results_url"] != g.URL+"/v1/messages/batches/"+id+"/results" {
		t.Fatalf("ended batch = %v", b)
	}
	req, _ := http.NewRequest("GET", g.URL+"/v1/messages/batches/"+id+"/results", nil)
	req.Header.Set("x-api-key", batchKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	results := map[string]map[string]any{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var line struct {
			CustomID string         `json:"custom_id"`
			Result   map[string]any `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("results line %q: %v", sc.Text(), err)
		}
		results[line.CustomID] = line.Result
	}
	if len(results) != 3 || results["m-1"]["type"] != "succeeded" || results["m-2"]["type"] != "errored" {
		t.Fatalf("results = %v", results)
	}
	if msg, _ := results["m-3"]["message"].(map[string]any); msg["type"] != "message" || msg["role"] != "assistant" {
		t.Errorf("a succeeded result holds %v, want a message", results["m-3"])
	}
	if e, _ := results["m-2"]["error"].(map[string]any); e["type"] != "error" {
		t.Errorf("an errored result holds %v, want the messages error object", results["m-2"])
	}
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(2000) {
		t.Fatalf("rows = %v", rows)
	}
	if after := balance(t, g); before-after != 2000 {
		t.Errorf("charged %d, want 2 lines", before-after)
	}
	code, list, _ := messagesCall(t, g, "GET", "/v1/messages/batches", nil)
	if data, _ := list["data"].([]any); code != 200 || len(data) != 1 {
		t.Errorf("list: %d %v", code, list)
	}
}

func TestABadMessageBatchIsRefusedInTheMessagesDialect(t *testing.T) {
	g := batchGateway(t, "http://127.0.0.1:1", 0, 1_000_000)
	tests := []struct {
		name string
		body any
		want int
	}{
		{"no requests", map[string]any{"requests": []any{}}, 400},
		{"an unknown model", map[string]any{"requests": []any{map[string]any{"custom_id": "a",
			"params": map[string]any{"model": "nope", "max_tokens": 5, "messages": []any{}}}}}, 400},
		{"a repeated custom_id", map[string]any{"requests": []any{messageRequest("a", "x"), messageRequest("a", "y")}}, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body, raw := messagesCall(t, g, "POST", "/v1/messages/batches", tc.body)
			e, _ := body["error"].(map[string]any)
			if code != tc.want || body["type"] != "error" || e["type"] != "invalid_request_error" || e["message"] == "" {
				t.Fatalf("%d %s", code, raw)
			}
		})
	}
	if code, _, _ := messagesCall(t, g, "GET", "/v1/messages/batches/msgbatch_nope", nil); code != 404 {
		t.Errorf("unknown batch: %d", code)
	}
}

// A Message Batch is a request body like any other: request_body_limit_mb
// bounds it (files.max_mb, 200 MB by default, bounds uploads only).
func TestAMessageBatchBodyIsBoundedByTheRequestBodyLimit(t *testing.T) {
	g := batchGateway(t, "http://127.0.0.1:9", 1, 1_000_000, func(c *config.Config) { c.RequestBodyLimitMB = 1 })
	big := strings.Repeat("x", 1<<20)
	code, _, raw := messagesCall(t, g, "POST", "/v1/messages/batches", map[string]any{"requests": []any{messageRequest("m-1", big)}})
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body past the limit: %d %s", code, raw)
	}
}
