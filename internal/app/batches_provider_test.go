package app_test

import (
	"encoding/json"
	"fmt"
	"io"
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

// fakeBatchAPI behaves like OpenAI's files and batches API: it takes the
// input file, runs the batch after two polls, and answers an output file
// (every line but req-3) and an error file (req-3). It checks the key, the
// purpose and that every line names the channel's mapped model.
type fakeBatchAPI struct {
	t *testing.T
	// refuse makes the provider fail the batch at its validation.
	refuse bool
	// endpoint is the batch endpoint the provider expects (default
	// /v1/chat/completions).
	endpoint string
	// hold keeps the batch in progress until a cancel, which the provider
	// then ends with req-1 done.
	hold bool
	// usage, when set, is the usage object of every answered line.
	usage                   string
	uploads, creates, polls atomic.Int32
	cancels                 atomic.Int32
	mu                      sync.Mutex
	input                   []string
	problems                []string
}

func (f *fakeBatchAPI) problem(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

func (f *fakeBatchAPI) serve() *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer upstream-key" {
			f.problem("%s %s with auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
			http.Error(w, `{"error":{"message":"bad key"}}`, 401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/files":
			f.uploads.Add(1)
			if r.FormValue("purpose") != "batch" {
				f.problem("purpose %q", r.FormValue("purpose"))
			}
			file, _, err := r.FormFile("file")
			if err != nil {
				f.problem("no file: %v", err)
				return
			}
			raw, _ := io.ReadAll(file)
			f.mu.Lock()
			f.input = strings.Split(strings.TrimSpace(string(raw)), "\n")
			f.mu.Unlock()
			for _, l := range f.input {
				if !strings.Contains(l, `"model":"bulk-upstream"`) || (f.endpoint != "" && !strings.Contains(l, `"url":"`+f.endpoint+`"`)) {
					f.problem("line not mapped: %s", l)
				}
			}
			fmt.Fprint(w, `{"id":"file-up-1","object":"file","purpose":"batch","status":"processed"}`)
		case r.Method == "POST" && r.URL.Path == "/v1/batches":
			f.creates.Add(1)
			var req map[string]any
			_ = json.NewDecoder(r.Body).Decode(&req)
			want := f.endpoint
			if want == "" {
				want = "/v1/chat/completions"
			}
			if req["input_file_id"] != "file-up-1" || req["endpoint"] != want || req["completion_window"] != "24h" {
				f.problem("create %v", req)
			}
			fmt.Fprint(w, `{"id":"batch_up_1","object":"batch","status":"validating"}`)
		case r.Method == "POST" && r.URL.Path == "/v1/batches/batch_up_1/cancel":
			f.cancels.Add(1)
			fmt.Fprint(w, `{"id":"batch_up_1","object":"batch","status":"cancelling"}`)
		case r.Method == "GET" && r.URL.Path == "/v1/batches/batch_up_1" && f.hold:
			f.polls.Add(1)
			if f.cancels.Load() == 0 {
				fmt.Fprint(w, `{"id":"batch_up_1","object":"batch","status":"in_progress","request_counts":{"total":4,"completed":1,"failed":0}}`)
				return
			}
			fmt.Fprint(w, `{"id":"batch_up_1","object":"batch","status":"cancelled","output_file_id":"file-out-1"}`)
		case r.Method == "GET" && r.URL.Path == "/v1/files/file-out-1/content":
			fmt.Fprint(w, `{"id":"r-1","custom_id":"req-1","response":{"status_code":200,"request_id":"x","body":{"object":"chat.completion","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}},"error":null}`+"\n")
		case r.Method == "GET" && r.URL.Path == "/v1/batches/batch_up_1" && f.refuse:
			f.polls.Add(1)
			fmt.Fprint(w, `{"id":"batch_up_1","object":"batch","status":"failed","errors":{"object":"list","data":[{"code":"invalid_request","message":"the provider refuses line 2","line":2}]}}`)
		case r.Method == "GET" && r.URL.Path == "/v1/batches/batch_up_1":
			if f.polls.Add(1) < 3 {
				fmt.Fprint(w, `{"id":"batch_up_1","object":"batch","status":"in_progress","request_counts":{"total":4,"completed":1,"failed":0}}`)
				return
			}
			fmt.Fprint(w, `{"id":"batch_up_1","object":"batch","status":"completed","output_file_id":"file-out","error_file_id":"file-err","request_counts":{"total":4,"completed":3,"failed":1}}`)
		case r.Method == "GET" && r.URL.Path == "/v1/files/file-out/content":
			usage := f.usage
			if usage == "" {
				usage = `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`
			}
			for _, id := range []string{"req-1", "req-2", "req-4"} {
				fmt.Fprintf(w, `{"id":"r-%s","custom_id":%q,"response":{"status_code":200,"request_id":"x","body":{"object":"chat.completion","choices":[],"usage":%s}},"error":null}`+"\n", id, id, usage)
			}
		case r.Method == "GET" && r.URL.Path == "/v1/files/file-err/content":
			fmt.Fprint(w, `{"id":"r-3","custom_id":"req-3","response":{"status_code":400,"request_id":"y","body":{"error":{"message":"bad","type":"invalid_request_error"}}},"error":null}`+"\n")
		default:
			f.problem("unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
		}
	}))
	f.t.Cleanup(srv.Close)
	return srv
}

func providerGateway(t *testing.T, url string, prices ...config.SeedPrice) *testkit.Gateway {
	weight := 1
	price := config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 2}
	if len(prices) > 0 {
		price = prices[0]
	}
	return testkit.Start(t,
		testkit.WithRootToken(batchRoot),
		testkit.WithPollInterval(100*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: 1_000_000},
			config.SeedUser{Username: "bob", Password: "bob-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "alice-key", User: "alice", Key: batchKey},
			config.SeedToken{Name: "bob-key", User: "bob", Key: batchKey2}),
		testkit.WithChannels(config.SeedChannel{Name: "openai-batches", Type: "openai", BaseURL: url, Key: "upstream-key",
			Models: []string{batchModel}, Groups: []string{"default"}, Weight: &weight,
			ModelMapping: map[string]string{batchModel: "bulk-upstream"}}),
		testkit.WithModels(map[string]config.SeedPrice{batchModel: price}),
	)
}

func TestAProviderBatchPaysTheModelsBatchPriceWhenItHasOne(t *testing.T) {
	f := &fakeBatchAPI{t: t}
	g := providerGateway(t, f.serve().URL, config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 2, BatchInputPerMTok: 0.2, BatchOutputPerMTok: 0.4})
	var lines []string
	for i := 1; i <= 4; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
	}
	_, b := startBatch(t, g, batchKey, lines...)
	awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	// 1000 in at 0.2 + 500 out at 0.4 per Mtok = 0.0004 USD = 200 a line,
	// three successful lines.
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(600) {
		t.Fatalf("rows = %v", rows)
	}
}

func TestAnOpenAIChannelRunsTheBatchAsAProviderBatchAtHalfPrice(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart while polling %v", restart), func(t *testing.T) {
			f := &fakeBatchAPI{t: t}
			g := providerGateway(t, f.serve().URL)
			before := balance(t, g)
			var lines []string
			for i := 1; i <= 4; i++ {
				lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
			}
			code, b := startBatch(t, g, batchKey, lines...)
			if code != 200 {
				t.Fatalf("create: %d %v", code, b)
			}
			if restart {
				testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return f.polls.Load() >= 1 })
				g.Restart()
			}
			b = awaitBatch(t, g, batchKey, b["id"].(string), "completed")
			if counts(b) != "4/3/1" {
				t.Errorf("batch = %v", b)
			}
			if f.uploads.Load() != 1 || f.creates.Load() != 1 {
				t.Errorf("%d uploads and %d creates, want one of each", f.uploads.Load(), f.creates.Load())
			}
			f.mu.Lock()
			if len(f.problems) > 0 || len(f.input) != 4 {
				t.Errorf("the provider saw %v (input %d lines)", f.problems, len(f.input))
			}
			f.mu.Unlock()
			_, out := content(t, g, batchKey, b["output_file_id"].(string))
			if strings.Count(out, "\n") != 3 || !strings.Contains(out, `"custom_id":"req-4"`) {
				t.Errorf("output = %s", out)
			}
			_, errOut := content(t, g, batchKey, b["error_file_id"].(string))
			if !strings.Contains(errOut, `"custom_id":"req-3"`) || !strings.Contains(errOut, `"status_code":400`) {
				t.Errorf("errors = %s", errOut)
			}
			// 1000 in at 0.5 + 500 out at 1.0 per Mtok = 0.001 USD = 500
			// units a line, three lines.
			rows := batchRows(t, g, 1)
			if len(rows) != 1 || rows[0]["quota"] != float64(1500) {
				t.Fatalf("rows = %v", rows)
			}
			bo := rows[0]["other"].(map[string]any)["batch"].(map[string]any)
			if bo["lines"] != float64(4) || bo["failed"] != float64(1) {
				t.Errorf("other.batch = %v", bo)
			}
			if after := balance(t, g); before-after != 1500 {
				t.Errorf("charged %d, want 1500", before-after)
			}
		})
	}
}

func TestABatchTheProviderRefusesEndsFailedWithItsErrorsAndChargesNothing(t *testing.T) {
	f := &fakeBatchAPI{t: t, refuse: true}
	g := providerGateway(t, f.serve().URL)
	before := balance(t, g)
	_, b := startBatch(t, g, batchKey, chatLine("req-1", "work"), chatLine("req-2", "work"))
	b = awaitBatch(t, g, batchKey, b["id"].(string), "failed", "completed", "expired")
	errs, _ := b["errors"].(map[string]any)
	data, _ := errs["data"].([]any)
	if b["status"] != "failed" || len(data) != 1 || data[0].(map[string]any)["line"] != float64(2) || b["failed_at"] == nil {
		t.Fatalf("batch = %v", b)
	}
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(0) {
		t.Fatalf("rows = %v", rows)
	}
	if after := balance(t, g); after != before {
		t.Errorf("balance %d → %d for a refused batch", before, after)
	}
}

func TestACancelledProviderBatchIsCancelledUpstreamOnceAndBillsWhatRan(t *testing.T) {
	f := &fakeBatchAPI{t: t, hold: true}
	g := providerGateway(t, f.serve().URL)
	before := balance(t, g)
	var lines []string
	for i := 1; i <= 4; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
	}
	_, b := startBatch(t, g, batchKey, lines...)
	id := b["id"].(string)
	testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return f.polls.Load() >= 1 })
	if code, c := g.Do(t, "POST", "/v1/batches/"+id+"/cancel", batchKey, nil); code != 200 || c["status"] != "cancelling" {
		t.Fatalf("cancel: %d %v", code, c)
	}
	b = awaitBatch(t, g, batchKey, id, "cancelled")
	if n := f.cancels.Load(); n != 1 {
		t.Errorf("the provider was asked to cancel %d times", n)
	}
	if counts(b) != "4/1/0" {
		t.Errorf("batch = %v", b)
	}
	_, errOut := content(t, g, batchKey, b["error_file_id"].(string))
	if strings.Count(errOut, `"code":"batch_cancelled"`) != 3 {
		t.Errorf("error file = %s", errOut)
	}
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(500) {
		t.Fatalf("rows = %v", rows)
	}
	if after := balance(t, g); before-after != 500 {
		t.Errorf("charged %d, want one line at half price", before-after)
	}
}

func TestAnAzureChannelRunsTheBatchThroughItsDeploymentAPI(t *testing.T) {
	f := &fakeBatchAPI{t: t, endpoint: "/chat/completions"}
	api := f.serve()
	// Azure's wire in front of the OpenAI-shaped fake: /openai/… with an
	// api-version and the api-key header.
	azure := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/openai/")
		if !ok || r.URL.Query().Get("api-version") != "2024-10-21" || r.Header.Get("api-key") != "upstream-key" {
			f.problem("azure got %s %s (api-key set: %v)", r.Method, r.URL.String(), r.Header.Get("api-key") != "")
			http.Error(w, `{"error":{"message":"not azure"}}`, 404)
			return
		}
		req, _ := http.NewRequest(r.Method, api.URL+"/v1/"+rest, r.Body)
		req.Header = r.Header.Clone()
		req.Header.Set("Authorization", "Bearer upstream-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(azure.Close)
	weight := 1
	g := testkit.Start(t,
		testkit.WithRootToken(batchRoot),
		testkit.WithPollInterval(100*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "alice-key", User: "alice", Key: batchKey}),
		testkit.WithChannels(config.SeedChannel{Name: "azure-batches", Type: "azure", BaseURL: azure.URL, Key: "upstream-key",
			Models: []string{batchModel}, Groups: []string{"default"}, Weight: &weight,
			Settings: map[string]any{"deployments": map[string]any{batchModel: "bulk-upstream"}}}),
		testkit.WithModels(map[string]config.SeedPrice{batchModel: {InputPerMTok: 1, OutputPerMTok: 2}}),
	)
	var lines []string
	for i := 1; i <= 4; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
	}
	_, b := startBatch(t, g, batchKey, lines...)
	b = awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	f.mu.Lock()
	defer f.mu.Unlock()
	if counts(b) != "4/3/1" || len(f.problems) > 0 || f.uploads.Load() != 1 || f.creates.Load() != 1 {
		t.Fatalf("batch %v, provider problems %v", b, f.problems)
	}
}
