package app_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// endlessStream is an upstream whose chat stream never ends: a chunk every
// 50 ms, until the gateway hangs up.
func endlessStream(t *testing.T) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; ; i++ {
			_, err := fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"}}]}\n\n", i)
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(up.Close)
	return up
}

// A stream still open when the shutdown grace ends does not end cleanly
// (no [DONE]), is billed for what it delivered, and
// the process exits 0 soon after the grace, saying how many calls were in
// flight and when it stopped.
func TestShutdownEndsOpenStreamsWithAnErrorAndBillsWhatTheyDelivered(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signals the real binary")
	}
	bin := buildGateway(t)
	up := endlessStream(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "shutdown.db")
	cfg := fmt.Sprintf(`database: "sqlite:%s"
root_token: "shutdown-root-token"
retry_count: 0
shutdown_grace_seconds: 1
users:
  - {username: alice, password: "alice-pass-123", role: user, quota: 100000000}
tokens:
  - {name: k, user: alice, key: "sk-shutdown-alice"}
channels:
  - {name: up, type: openai, base_url: %q, key: k, models: [m]}
models:
  m: {input_per_mtok: 100, output_per_mtok: 200}
`, dbPath, up.URL)
	cfgPath := filepath.Join(dir, "turnpike.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, bin, cfgPath)
	g.showLogOnFailure(t, "shutdown")

	req, _ := http.NewRequest("POST", g.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"go on forever"}]}`))
	req.Header.Set("Authorization", "Bearer sk-shutdown-alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for seen := 0; seen < 5 && sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "data: ") {
			seen++
		}
	}
	signalled := time.Now()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var last string
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			last = line
		}
	}
	// Never a clean end. The dialect's error event itself is written by
	// the stream tail's broken-stream path (CONTRACT §22, truncated
	// streams), which the shutdown reaches like any upstream break.
	if last == "data: [DONE]" {
		t.Errorf("the stream cut by the shutdown ended cleanly with %q", last)
	}
	select {
	case err := <-g.done:
		if err != nil {
			t.Errorf("exit: %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the gateway did not exit after the grace")
	}
	if took := time.Since(signalled); took < time.Second || took > 12*time.Second {
		t.Errorf("stopped %v after the signal, want just after the 1 s grace", took)
	}
	logText, _ := os.ReadFile(g.logPath)
	for _, want := range []string{"in_flight=1", "grace=1s", "stopped"} {
		if !strings.Contains(string(logText), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var consumed, completion, refunds int64
	if err := db.QueryRow(`SELECT COALESCE(SUM(CASE WHEN type = 'consume' THEN quota END), 0),
		COALESCE(SUM(CASE WHEN type = 'consume' THEN completion_tokens END), 0),
		COUNT(CASE WHEN type <> 'consume' AND type <> 'topup' THEN 1 END) FROM usage_logs`).Scan(&consumed, &completion, &refunds); err != nil {
		t.Fatal(err)
	}
	if consumed <= 0 || completion <= 0 {
		t.Errorf("the cut stream was billed %d quota for %d output tokens, want what it delivered", consumed, completion)
	}
	if refunds != 0 {
		t.Errorf("%d error/refund rows: an answered call must not be refunded", refunds)
	}
}
