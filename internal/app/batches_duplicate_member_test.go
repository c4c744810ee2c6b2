package app_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A batch line, or its body, that names a member twice fails validation
// with its line number (CONTRACT §13, §15): the gateway would check and
// bill the first member while the upstream runs the last.
func TestABatchLineThatNamesAMemberTwiceFailsTheBatch(t *testing.T) {
	up := &batchUpstream{}
	g := batchGateway(t, up.serve(t).URL, 0, 1_000_000)
	before := balance(t, g)
	code, b := startBatch(t, g, batchKey,
		chatLine("a", "work"),
		`{"custom_id":"b","method":"POST","url":"/v1/chat/completions","body":{"model":"`+batchModel+`","messages":[],"model":"o1-pro"}}`,
		`{"custom_id":"c","method":"POST","url":"/v1/chat/completions","url":"/v1/embeddings","body":{"model":"`+batchModel+`","messages":[]}}`,
	)
	if code != 200 || b["status"] != "failed" {
		t.Fatalf("create: %d %v", code, b)
	}
	got := map[float64]string{}
	for _, e := range b["errors"].(map[string]any)["data"].([]any) {
		m := e.(map[string]any)
		got[m["line"].(float64)] += fmt.Sprint(m["code"], " ", m["param"])
	}
	want := map[float64]string{2: "duplicate_member body.model", 3: "duplicate_member url"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("errors by line = %v, want %v", got, want)
	}
	time.Sleep(200 * time.Millisecond)
	if after := balance(t, g); after != before {
		t.Errorf("balance %d → %d for a refused file", before, after)
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("the upstream got %d calls", n)
	}
}

func TestAMessageBatchThatNamesAMemberTwiceIsRefused(t *testing.T) {
	up := &batchUpstream{}
	g := batchGateway(t, up.serve(t).URL, 0, 1_000_000)
	before := balance(t, g)
	body := json.RawMessage(`{"requests":[{"custom_id":"m-1","params":{"model":"` + batchModel +
		`","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"max_tokens":64000}}]}`)
	code, b, raw := messagesCall(t, g, "POST", "/v1/messages/batches", body)
	e, _ := b["error"].(map[string]any)
	if code != 400 || b["type"] != "error" || e["type"] != "invalid_request_error" ||
		!strings.Contains(fmt.Sprint(e["message"]), `"requests[0].params.max_tokens"`) {
		t.Fatalf("create: %d %s", code, raw)
	}
	if after := balance(t, g); after != before || up.calls.Load() != 0 {
		t.Errorf("balance %d → %d, upstream calls %d", before, after, up.calls.Load())
	}
}
