package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// chatLine is one input line of a chat completions batch.
func chatLine(id, prompt string) string {
	b, _ := json.Marshal(map[string]any{"custom_id": id, "method": "POST", "url": "/v1/chat/completions",
		"body": map[string]any{"model": batchModel, "messages": []any{map[string]any{"role": "user", "content": prompt}}}})
	return string(b)
}

func startBatch(t *testing.T, g *testkit.Gateway, key string, lines ...string) (int, map[string]any) {
	t.Helper()
	code, f := upload(t, g, key, "batch", "in.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	if code != 200 {
		t.Fatalf("upload: %d %v", code, f)
	}
	return g.Do(t, "POST", "/v1/batches", key, map[string]any{"input_file_id": f["id"], "endpoint": "/v1/chat/completions",
		"completion_window": "24h", "metadata": map[string]any{"job": "nightly"}})
}

// awaitBatch polls the batch until its status is one of want.
func awaitBatch(t *testing.T, g *testkit.Gateway, key, id string, want ...string) map[string]any {
	t.Helper()
	var b map[string]any
	ok := testkit.WaitFor(20*time.Second, 50*time.Millisecond, func() bool {
		_, b = g.Do(t, "GET", "/v1/batches/"+id, key, nil)
		for _, w := range want {
			if b["status"] == w {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("batch %s stayed %v, want %v", id, b["status"], want)
	}
	return b
}

// balance is alice's remaining quota as the admin API reports it.
func balance(t *testing.T, g *testkit.Gateway) int64 {
	t.Helper()
	_, users := g.Do(t, "GET", "/api/users?page_size=100", batchRoot, nil)
	for _, it := range users["items"].([]any) {
		u := it.(map[string]any)
		if u["username"] == "alice" {
			return int64(u["quota"].(float64))
		}
	}
	t.Fatal("alice not found")
	return 0
}

// batchRows are the consume rows of the batch model, waited for until n.
func batchRows(t *testing.T, g *testkit.Gateway, n int) []map[string]any {
	t.Helper()
	var rows []map[string]any
	testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool {
		_, body := g.Do(t, "GET", "/api/logs?type=consume&page_size=100&model="+batchModel, batchRoot, nil)
		rows = rows[:0]
		for _, it := range body["items"].([]any) {
			rows = append(rows, it.(map[string]any))
		}
		return len(rows) >= n
	})
	return rows
}

func counts(b map[string]any) string {
	c, _ := b["request_counts"].(map[string]any)
	return fmt.Sprintf("%v/%v/%v", c["total"], c["completed"], c["failed"])
}

func TestABadInputFileFailsTheBatchWithEveryBadLineAndChargesNothing(t *testing.T) {
	up := &batchUpstream{}
	g := batchGateway(t, up.serve(t).URL, 0, 1_000_000)
	g.Do(t, "PATCH", "/api/tokens/2", batchRoot, map[string]any{"models": []string{batchModel, "priceless", "other"}})
	before := balance(t, g)
	line := func(id, method, url, model string) string {
		b, _ := json.Marshal(map[string]any{"custom_id": id, "method": method, "url": url,
			"body": map[string]any{"model": model, "messages": []any{}}})
		return string(b)
	}
	code, b := startBatch(t, g, batchKey,
		line("a", "POST", "/v1/chat/completions", batchModel),
		`{"custom_id": "b", not json`,
		line("a", "POST", "/v1/chat/completions", batchModel),
		line("c", "GET", "/v1/chat/completions", batchModel),
		line("d", "POST", "/v1/embeddings", batchModel),
		line("e", "POST", "/v1/chat/completions", "no-such-model"),
		line("f", "POST", "/v1/chat/completions", "priceless"),
	)
	if code != 200 || b["status"] != "failed" || b["object"] != "batch" || b["failed_at"] == nil {
		t.Fatalf("create: %d %v", code, b)
	}
	errs := b["errors"].(map[string]any)
	if errs["object"] != "list" {
		t.Fatalf("errors = %v", errs)
	}
	got := map[float64]string{}
	for _, e := range errs["data"].([]any) {
		m := e.(map[string]any)
		got[m["line"].(float64)] += m["code"].(string) + " "
	}
	want := map[float64]string{2: "invalid_json_line ", 3: "duplicate_custom_id ", 4: "invalid_method ", 5: "invalid_url ",
		6: "model_not_found ", 7: "model_price_error "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("errors by line = %v, want %v", got, want)
	}
	time.Sleep(300 * time.Millisecond)
	if after := balance(t, g); after != before {
		t.Errorf("balance %d → %d for a bad file", before, after)
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("the upstream got %d calls for a bad file", n)
	}
	if rows := batchRows(t, g, 0); len(rows) != 0 {
		t.Errorf("usage rows for a bad file: %v", rows)
	}
}

func TestAGatewayRunBatchKeepsItsConcurrencyAndBillsOnlySuccessfulLines(t *testing.T) {
	up := &batchUpstream{delay: 60 * time.Millisecond}
	g := batchGateway(t, up.serve(t).URL, 2, 1_000_000)
	before := balance(t, g)
	var lines []string
	for i := 1; i <= 8; i++ {
		prompt := "work"
		if i == 3 || i == 6 {
			prompt = "fail"
		}
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), prompt))
	}
	code, b := startBatch(t, g, batchKey, lines...)
	if code != 200 || b["status"] != "in_progress" || !strings.HasPrefix(b["id"].(string), "batch_") {
		t.Fatalf("create: %d %v", code, b)
	}
	if md := b["metadata"].(map[string]any); md["job"] != "nightly" {
		t.Errorf("metadata = %v", md)
	}
	b = awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	if counts(b) != "8/6/2" || b["completed_at"] == nil || b["finalizing_at"] == nil {
		t.Fatalf("finished batch = %v", b)
	}
	if p := up.peak(); p != 2 {
		t.Errorf("at most %d lines ran at once, want settings.batch_concurrency 2", p)
	}
	_, out := content(t, g, batchKey, b["output_file_id"].(string))
	outLines := strings.Split(strings.TrimSpace(out), "\n")
	if len(outLines) != 6 {
		t.Fatalf("output has %d lines: %s", len(outLines), out)
	}
	var first map[string]any
	_ = json.Unmarshal([]byte(outLines[0]), &first)
	resp := first["response"].(map[string]any)
	if first["custom_id"] != "req-1" || resp["status_code"] != float64(200) || first["error"] != nil ||
		resp["body"].(map[string]any)["object"] != "chat.completion" {
		t.Errorf("output line = %v", first)
	}
	_, errOut := content(t, g, batchKey, b["error_file_id"].(string))
	if !strings.Contains(errOut, `"custom_id":"req-3"`) || !strings.Contains(errOut, `"custom_id":"req-6"`) ||
		!strings.Contains(errOut, `"status_code":400`) || strings.Count(errOut, "\n") != 2 {
		t.Errorf("error file = %s", errOut)
	}
	if code, _ := content(t, g, batchKey2, b["output_file_id"].(string)); code != 404 {
		t.Errorf("bob reads alice's batch output: %d", code)
	}
	rows := batchRows(t, g, 1)
	if len(rows) != 1 {
		t.Fatalf("%d usage rows, want one per batch and model", len(rows))
	}
	row := rows[0]
	other := row["other"].(map[string]any)
	bo, _ := other["batch"].(map[string]any)
	if row["quota"] != float64(6000) || row["prompt_tokens"] != float64(6000) || row["completion_tokens"] != float64(3000) ||
		bo["id"] != b["id"] || bo["lines"] != float64(8) || bo["failed"] != float64(2) {
		t.Errorf("usage row = %v", row)
	}
	if other["group_ratio"] != 1.0 || other["upstream_cost_usd"] != "0.012" {
		t.Errorf("batch row's upstream cost = %v at group ratio %v, want its list dollars \"0.012\"", other["upstream_cost_usd"], other["group_ratio"])
	}
	if code, rec := g.Do(t, "GET", "/api/reports/reconcile", batchRoot, nil); code != 200 || rec["ok"] != true {
		t.Errorf("the books after a batch do not reconcile: %d %v", code, rec["differences"])
	}
	if after := balance(t, g); before-after != 6000 {
		t.Errorf("charged %d, want 6 lines × 1000", before-after)
	}
	_, list := g.Do(t, "GET", "/v1/batches?limit=5", batchKey, nil)
	if data := list["data"].([]any); len(data) != 1 || list["object"] != "list" || list["has_more"] != false {
		t.Errorf("list = %v", list)
	}
	if code, _ := g.Do(t, "GET", "/v1/batches/"+b["id"].(string), batchKey2, nil); code != 404 {
		t.Errorf("bob reads alice's batch: %d", code)
	}
	console := consoleList(t, g, "alice", "/api/batches")
	if len(console) != 1 || console[0]["id"] != b["id"] || console[0]["status"] != "completed" ||
		console[0]["charged"] != float64(6000) || console[0]["billed"] != true {
		t.Errorf("the console lists %v", console)
	}
	if files := consoleList(t, g, "alice", "/api/files"); len(files) != 3 {
		t.Errorf("the console lists files %v, want the input, output and error files", files)
	}
	if other := consoleList(t, g, "bob", "/api/batches"); len(other) != 0 {
		t.Errorf("bob's console lists %v", other)
	}
}

// consoleList reads a console list as the signed-in user.
func consoleList(t *testing.T, g *testkit.Gateway, user, path string) []map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", g.URL+path, nil)
	req.AddCookie(g.Login(t, user, user+"-password"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
	}
	return body.Items
}

func TestABatchWhoseEstimateDoesNotFitIsRefusedWith402(t *testing.T) {
	up := &batchUpstream{}
	g := batchGateway(t, up.serve(t).URL, 0, 5000)
	var lines []string
	for i := 0; i < 10; i++ {
		lines = append(lines, chatLine(fmt.Sprint(i), "work"))
	}
	code, body := startBatch(t, g, batchKey, lines...)
	e, _ := body["error"].(map[string]any)
	if code != 402 || e["code"] != "insufficient_quota" {
		t.Fatalf("create: %d %v, want 402 insufficient_quota", code, body)
	}
	if after := balance(t, g); after != 5000 {
		t.Errorf("balance %d after a refused batch", after)
	}
	if _, list := g.Do(t, "GET", "/v1/batches", batchKey, nil); len(list["data"].([]any)) != 0 {
		t.Errorf("a refused batch was recorded: %v", list)
	}
}

func TestACancelledBatchStopsBillsWhatRanAndListsTheRest(t *testing.T) {
	up := &batchUpstream{release: make(chan struct{})}
	g := batchGateway(t, up.serve(t).URL, 1, 1_000_000)
	before := balance(t, g)
	var lines []string
	for i := 1; i <= 5; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
	}
	_, b := startBatch(t, g, batchKey, lines...)
	id := b["id"].(string)
	up.release <- struct{}{} // line 1 answers
	testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return up.calls.Load() == 2 })
	code, c := g.Do(t, "POST", "/v1/batches/"+id+"/cancel", batchKey, nil)
	if code != 200 || (c["status"] != "cancelling" && c["status"] != "cancelled") {
		t.Fatalf("cancel: %d %v", code, c)
	}
	up.release <- struct{}{} // line 2, under way, finishes
	b = awaitBatch(t, g, batchKey, id, "cancelled")
	if counts(b) != "5/2/0" || b["cancelled_at"] == nil || b["cancelling_at"] == nil {
		t.Errorf("cancelled batch = %v", b)
	}
	if n := up.calls.Load(); n != 2 {
		t.Errorf("%d upstream calls, want the 2 started before the cancel", n)
	}
	_, errOut := content(t, g, batchKey, b["error_file_id"].(string))
	if strings.Count(errOut, `"code":"batch_cancelled"`) != 3 || !strings.Contains(errOut, `"custom_id":"req-5"`) {
		t.Errorf("error file = %s", errOut)
	}
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(2000) {
		t.Fatalf("rows = %v", rows)
	}
	if after := balance(t, g); before-after != 2000 {
		t.Errorf("charged %d, want 2 lines", before-after)
	}
	if code, again := g.Do(t, "POST", "/v1/batches/"+id+"/cancel", batchKey, nil); code != 200 || again["status"] != "cancelled" {
		t.Errorf("second cancel: %d %v", code, again)
	}
}

func TestABatchInterruptedByARestartFinishesAndIsBilledOnce(t *testing.T) {
	up := &batchUpstream{delay: 150 * time.Millisecond}
	g := batchGateway(t, up.serve(t).URL, 2, 1_000_000)
	before := balance(t, g)
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
	}
	_, b := startBatch(t, g, batchKey, lines...)
	id := b["id"].(string)
	testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return up.calls.Load() >= 4 })
	g.Restart()
	b = awaitBatch(t, g, batchKey, id, "completed")
	if counts(b) != "10/10/0" {
		t.Fatalf("batch after restart = %v", b)
	}
	_, out := content(t, g, batchKey, b["output_file_id"].(string))
	for i := 1; i <= 10; i++ {
		if n := strings.Count(out, fmt.Sprintf(`"custom_id":"req-%d"`, i)); n != 1 {
			t.Errorf("req-%d is %d times in the output", i, n)
		}
	}
	rows := batchRows(t, g, 1)
	time.Sleep(300 * time.Millisecond)
	rows = batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(10000) {
		t.Fatalf("rows = %v", rows)
	}
	if after := balance(t, g); before-after != 10000 {
		t.Errorf("charged %d, want 10 lines once", before-after)
	}
}

func TestABatchRefusedOnItsByteBoundIsRecountedBeforeA402(t *testing.T) {
	up := &batchUpstream{}
	// Each line is ~4 KB of a prompt of ~700 tokens with max_tokens 10:
	// ~2000 quota by its bytes, ~400 counted. Two lines fit 2000 only
	// when counted.
	g := batchGateway(t, up.serve(t).URL, 0, 2000)
	line := func(id string) string {
		b, _ := json.Marshal(map[string]any{"custom_id": id, "method": "POST", "url": "/v1/chat/completions",
			"body": map[string]any{"model": batchModel, "max_tokens": 10,
				"messages": []any{map[string]any{"role": "user", "content": strings.Repeat("hello ", 700)}}}})
		return string(b)
	}
	code, b := startBatch(t, g, batchKey, line("a"), line("b"))
	if code != 200 || b["status"] != "in_progress" {
		t.Fatalf("create: %d %v, want the counted estimate to fit", code, b)
	}
	awaitBatch(t, g, batchKey, b["id"].(string), "completed")
}

// A batch is admitted when it is created: a price change while its lines
// wait does not reach them, and its row names the version it was priced at.
func TestABatchIsChargedAtThePriceVersionInEffectWhenItWasCreated(t *testing.T) {
	up := &batchUpstream{release: make(chan struct{})}
	g := batchGateway(t, up.serve(t).URL, 1, 1_000_000)
	before := balance(t, g)
	_, b := startBatch(t, g, batchKey, chatLine("req-1", "work"), chatLine("req-2", "work"))
	id := b["id"].(string)
	testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool { return up.calls.Load() == 1 })
	if code, body := g.Do(t, "PUT", "/api/models/"+batchModel, batchRoot,
		map[string]any{"input_per_mtok": 2, "output_per_mtok": 4}); code != 200 {
		t.Fatalf("price change: %d %v", code, body)
	}
	up.release <- struct{}{}
	up.release <- struct{}{}
	awaitBatch(t, g, batchKey, id, "completed")
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(2000) {
		t.Fatalf("rows = %v, want both lines at the first price (1,000 each)", rows)
	}
	if other, _ := rows[0]["other"].(map[string]any); other["price_version"] != float64(1) {
		t.Errorf("row other = %v, want price_version 1", rows[0]["other"])
	}
	if after := balance(t, g); before-after != 2000 {
		t.Errorf("charged %d, want 2000", before-after)
	}
}
