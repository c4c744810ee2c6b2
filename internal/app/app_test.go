package app_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/cli"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badYAML, []byte("listen: ':1'\nlisen: typo\n"), 0o600)
	plugin := filepath.Join(dir, "p.js")
	os.WriteFile(plugin, []byte("export const meta = {};"), 0o600)
	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"version", []string{"version"}, 0, "turnpike " + app.Version, ""},
		{"help", []string{"help"}, 0, "Usage: turnpike", ""},
		{"unknown command", []string{"frobnicate"}, 2, "", "unknown command"},
		{"unknown yaml key", []string{"serve", "--config", badYAML}, 1, "", "lisen"},
		{"missing config file", []string{"--config", filepath.Join(dir, "nope.yaml")}, 1, "", "nope.yaml"},
		{"plugin check lists problems", []string{"plugin", "check", plugin}, 1, "meta.", ""},
		{"plugin check usage", []string{"plugin", "check"}, 2, "", "usage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cli.Main(tc.args, &out, &errb, func(string) string { return "" })
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("code %d, stdout %q, stderr %q", code, out.String(), errb.String())
			}
		})
	}
}

// slowUpstream answers a chat call after a pause, so a shutdown can begin
// while the call is in flight.
func slowUpstream(t *testing.T, pause time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(pause)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":1000,"total_tokens":2000}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestShutdownFinishesInFlightCallsAndFlushesBilling(t *testing.T) {
	up := slowUpstream(t, 300*time.Millisecond)
	weight := 1
	g := testkit.Start(t,
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "alice", Key: "sk-shutdown-test"}),
		testkit.WithChannels(config.SeedChannel{Name: "c", Type: "openai", BaseURL: up.URL, Key: "k", Models: []string{"m"}, Groups: []string{"default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1, OutputPerMTok: 1}}),
	)
	result := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", g.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-shutdown-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			result <- -1
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		result <- resp.StatusCode
	}()
	time.Sleep(100 * time.Millisecond) // the call is now waiting on the upstream
	g.Stop()
	if code := <-result; code != 200 {
		t.Fatalf("in-flight call got %d", code)
	}
	// Reopen the database: the charge must have been written before exit.
	st, err := sqlstore.Open(context.Background(), g.App.Config.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := st.Users().GetByUsername(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	const charge = 1000 // (1000 + 1000) tokens × $1/Mtok × 500000 quota/$
	if u.Quota != 1_000_000-charge || u.UsedQuota != charge {
		t.Fatalf("after shutdown quota %d used %d", u.Quota, u.UsedQuota)
	}
	logs, _, _ := st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{})
	if len(logs) != 1 {
		t.Fatalf("consume rows %d", len(logs))
	}
}
