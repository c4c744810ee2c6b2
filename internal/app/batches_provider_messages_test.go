package app_test

import (
	"bufio"
	"encoding/json"
	"fmt"
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

// fakeMessageBatches behaves like the Message Batches API: it takes the
// requests, ends after two polls, and answers results where m-2 errored.
type fakeMessageBatches struct {
	creates, polls, cancels atomic.Int32
	mu                      sync.Mutex
	requests                []map[string]any
	problems                []string
}

func (f *fakeMessageBatches) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "upstream-key" || r.Header.Get("anthropic-version") == "" {
			f.mu.Lock()
			f.problems = append(f.problems, fmt.Sprintf("%s %s without the messages headers", r.Method, r.URL.Path))
			f.mu.Unlock()
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"no"}}`, 401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/messages/batches":
			f.creates.Add(1)
			var body struct {
				Requests []map[string]any `json:"requests"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			f.mu.Lock()
			f.requests = body.Requests
			f.mu.Unlock()
			fmt.Fprint(w, `{"id":"msgbatch_up_1","type":"message_batch","processing_status":"in_progress"}`)
		case r.Method == "GET" && r.URL.Path == "/v1/messages/batches/msgbatch_up_1":
			if f.polls.Add(1) < 2 {
				fmt.Fprint(w, `{"id":"msgbatch_up_1","type":"message_batch","processing_status":"in_progress","request_counts":{"processing":3,"succeeded":0,"errored":0}}`)
				return
			}
			fmt.Fprint(w, `{"id":"msgbatch_up_1","type":"message_batch","processing_status":"ended","results_url":"http://elsewhere.invalid/results"}`)
		case r.Method == "GET" && r.URL.Path == "/v1/messages/batches/msgbatch_up_1/results":
			for _, id := range []string{"m-1", "m-3"} {
				fmt.Fprintf(w, `{"custom_id":%q,"result":{"type":"succeeded","message":{"id":"msg_1","type":"message","role":"assistant","model":"bulk-upstream","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":600,"cache_read_input_tokens":400,"output_tokens":500}}}}`+"\n", id)
			}
			fmt.Fprint(w, `{"custom_id":"m-2","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}}}`+"\n")
		default:
			f.mu.Lock()
			f.problems = append(f.problems, "unexpected "+r.Method+" "+r.URL.Path)
			f.mu.Unlock()
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAMessagesChannelWithBatchesRunsAMessageBatchAsAProviderBatch(t *testing.T) {
	f := &fakeMessageBatches{}
	weight := 1
	g := testkit.Start(t,
		testkit.WithRootToken(batchRoot),
		testkit.WithPollInterval(100*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "alice-key", User: "alice", Key: batchKey}),
		testkit.WithChannels(config.SeedChannel{Name: "claude-batches", Type: "anthropic", BaseURL: f.serve(t).URL, Key: "upstream-key",
			Models: []string{batchModel}, Groups: []string{"default"}, Weight: &weight,
			ModelMapping: map[string]string{batchModel: "bulk-upstream"}, Settings: map[string]any{"batches": true}}),
		testkit.WithModels(map[string]config.SeedPrice{batchModel: {InputPerMTok: 1, OutputPerMTok: 2}}),
	)
	before := balance(t, g)
	code, b, raw := messagesCall(t, g, "POST", "/v1/messages/batches", map[string]any{"requests": []any{
		messageRequest("m-1", "a"), messageRequest("m-2", "b"), messageRequest("m-3", "c")}})
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := b["id"].(string)
	testkit.WaitFor(20*time.Second, 50*time.Millisecond, func() bool {
		_, b, _ = messagesCall(t, g, "GET", "/v1/messages/batches/"+id, nil)
		return b["processing_status"] == "ended"
	})
	c, _ := b["request_counts"].(map[string]any)
	if b["processing_status"] != "ended" || c["succeeded"] != float64(2) || c["errored"] != float64(1) {
		t.Fatalf("batch = %v", b)
	}
	f.mu.Lock()
	if f.creates.Load() != 1 || len(f.requests) != 3 || len(f.problems) > 0 {
		t.Errorf("%d creates, %d requests, problems %v", f.creates.Load(), len(f.requests), f.problems)
	}
	for _, q := range f.requests {
		if p, _ := q["params"].(map[string]any); p["model"] != "bulk-upstream" || q["custom_id"] == nil {
			t.Errorf("request sent %v, want the mapped model", q)
		}
	}
	f.mu.Unlock()
	req, _ := http.NewRequest("GET", g.URL+"/v1/messages/batches/"+id+"/results", nil)
	req.Header.Set("x-api-key", batchKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	types := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var l struct {
			CustomID string `json:"custom_id"`
			Result   struct {
				Type string `json:"type"`
			} `json:"result"`
		}
		_ = json.Unmarshal(sc.Bytes(), &l)
		types[l.CustomID] = l.Result.Type
	}
	if fmt.Sprint(types) != "map[m-1:succeeded m-2:errored m-3:succeeded]" {
		t.Errorf("results = %v", types)
	}
	// Half the live price: 600 + 400 cached input at 0.5 and 500 output at
	// 1.0 per Mtok = 0.001 USD = 500 a line, two lines.
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(1000) {
		t.Fatalf("rows = %v", rows)
	}
	if after := balance(t, g); before-after != 1000 {
		t.Errorf("charged %d, want 1000", before-after)
	}
	if !strings.HasPrefix(id, "msgbatch_") {
		t.Errorf("id %s", id)
	}
}
