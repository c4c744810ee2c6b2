package app_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

func TestAProviderBatchLineIsBilledForItsReasoningTokens(t *testing.T) {
	f := &fakeBatchAPI{t: t, usage: `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500,"completion_tokens_details":{"reasoning_tokens":400}}`}
	g := providerGateway(t, f.serve().URL, config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 2, ReasoningPerMTok: 10})
	var lines []string
	for i := 1; i <= 4; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "think"))
	}
	_, b := startBatch(t, g, batchKey, lines...)
	awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	// At half the live prices: 1000 in at 0.5, 100 plain out at 1 and 400
	// reasoning at 5 per Mtok = 0.0026 USD = 1300 a line, three lines.
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(3900) {
		t.Fatalf("rows = %v, want one of 3900 (reasoning at its own price)", rows)
	}
}

// keyGate is a provider in front of fake that refuses the key "bad-key"
// as OpenAI does and lets any other through.
func keyGate(t *testing.T, fake string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer bad-key" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		req, _ := http.NewRequest(r.Method, fake+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func keyGateway(t *testing.T, url, keys string) *testkit.Gateway {
	weight := 1
	return testkit.Start(t,
		testkit.WithRootToken(batchRoot),
		testkit.WithPollInterval(100*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "alice-key", User: "alice", Key: batchKey}),
		testkit.WithChannels(config.SeedChannel{Name: "openai-batches", Type: "openai", BaseURL: url, Key: keys,
			Models: []string{batchModel}, Groups: []string{"default"}, Weight: &weight,
			ModelMapping: map[string]string{batchModel: "bulk-upstream"}}),
		testkit.WithModels(map[string]config.SeedPrice{batchModel: {InputPerMTok: 1, OutputPerMTok: 2}}),
	)
}

// channelState is the state of the batch channel's key from the admin API.
func channelState(t *testing.T, g *testkit.Gateway, key int) string {
	t.Helper()
	_, body := g.Do(t, "GET", "/api/channels", batchRoot, nil)
	for _, it := range body["items"].([]any) {
		c := it.(map[string]any)
		if c["name"] != "openai-batches" {
			continue
		}
		if ks, ok := c["keys"].([]any); ok && len(ks) > key {
			return fmt.Sprint(ks[key].(map[string]any)["state"])
		}
		return fmt.Sprint(c["health"].(map[string]any)["state"])
	}
	t.Fatalf("no batch channel in %v", body)
	return ""
}

func TestAProviderBatchRefusedForItsKeyDisablesTheKey(t *testing.T) {
	f := &fakeBatchAPI{t: t}
	g := keyGateway(t, keyGate(t, f.serve().URL).URL, "bad-key")
	_, b := startBatch(t, g, batchKey, chatLine("req-1", "work"))
	ok := testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool { return channelState(t, g, 0) == "auto_disabled" })
	if !ok {
		t.Fatalf("the channel is %s after its provider refused the batch upload's key, want auto_disabled (batch %v)",
			channelState(t, g, 0), b["id"])
	}
	if f.uploads.Load() != 0 {
		t.Errorf("the refused key reached the files API")
	}
}

func TestAProviderBatchMovesOffARefusedKeyBeforeAnythingIsCreated(t *testing.T) {
	f := &fakeBatchAPI{t: t}
	g := keyGateway(t, keyGate(t, f.serve().URL).URL, "bad-key\nupstream-key")
	var lines []string
	for i := 1; i <= 4; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
	}
	_, b := startBatch(t, g, batchKey, lines...)
	b = awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	if counts(b) != "4/3/1" || f.uploads.Load() != 1 || f.creates.Load() != 1 {
		t.Fatalf("batch %v with %d uploads and %d creates", b, f.uploads.Load(), f.creates.Load())
	}
	if s := channelState(t, g, 1); s != "healthy" {
		t.Errorf("the working key is %s", s)
	}
}
