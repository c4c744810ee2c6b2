package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// The answers of the stream fakes, as compat/test/streams.test.js expects.
const (
	trustPartial = "The first half "
	trustRest    = "and the second half."
	trustCached  = "A story worth keeping."
)

// TestOfficialClientsOnStreams shows what the official OpenAI (chat and
// Responses), Anthropic and Google Gen AI clients see of CONTRACT §22
// (compat/test/streams.test.js): an exception on a truncated stream, a
// normal end after a failover, identical content and the header on a cache
// hit; then it checks the rows. The channels serve Responses calls by
// conversion (the fakes speak chat only).
func TestOfficialClientsOnStreams(t *testing.T) {
	dir, node := requireNode(t)
	breaker := httptest.NewServer(http.HandlerFunc(breakingUpstream))
	defer breaker.Close()
	whole := httptest.NewServer(http.HandlerFunc(wholeUpstream))
	defer whole.Close()
	weight, unlimited := 1, int64(-1)
	channel := func(name, url string, priority int64, models ...string) config.SeedChannel {
		return config.SeedChannel{Name: name, Type: "openai", BaseURL: url, Key: "up-key", Models: models,
			Groups: []string{"default"}, Weight: &weight, Priority: priority, Status: "enabled",
			Settings: map[string]any{"responses": "chat"}}
	}
	price := config.SeedPrice{InputPerMTok: inputPerMTok, OutputPerMTok: outputPerMTok}
	failover, cached := price, price
	failover.StreamFailover = true
	cached.ResponseCache = map[string]any{"ttl_seconds": 300}
	gw := testkit.Start(t, testkit.WithSeed(config.Seed{
		Groups: map[string]float64{"default": 1},
		Users:  []config.SeedUser{{Username: "streams", Password: "streams-password", Role: "user", Group: "default", Quota: 100_000_000}},
		Tokens: []config.SeedToken{{Name: "streams-key", User: "streams", Key: clientKey, Quota: &unlimited}},
		Channels: []config.SeedChannel{
			channel("breaker", breaker.URL, 10, "trust-cut", "trust-failover"),
			channel("whole", whole.URL, 0, "trust-failover", "trust-cached"),
		},
		Models: map[string]config.SeedPrice{"trust-cut": price, "trust-failover": failover, "trust-cached": cached},
	}))

	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "test/streams.test.js")
	cmd.Dir = dir
	cmd.Env = append(hermeticEnv(cmd.Environ()), "TURNPIKE_URL="+gw.URL, "TURNPIKE_KEY="+clientKey, "TURNPIKE_STREAMS=1",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test failed (%v):\n%s", err, out)
	}
	t.Logf("node --test passed:\n%s", summary(string(out)))

	// rows is how many consume rows the model's calls write; waiting for
	// all of them keeps a slow writer from under-counting the marks.
	marked := func(model, mark string, rows int) int {
		all := waitForRows(context.Background(), t, gw.App.Store, model, rows)
		n := 0
		for _, r := range all {
			if bytes.Contains(r.Other, []byte(mark)) {
				n++
			}
		}
		return n
	}
	const clients = 4
	if n := marked("trust-cut", `"incomplete":true`, clients); n != clients {
		t.Errorf("%d truncated streams marked incomplete, want %d", n, clients)
	}
	if n := marked("trust-failover", `"failover":{`, clients); n != clients {
		t.Errorf("%d streams marked with their failover, want %d", n, clients)
	}
	if n := marked("trust-cached", `"response_cache":"hit"`, 3*clients); n != 2*clients {
		t.Errorf("%d cache hits billed, want %d (two per client)", n, 2*clients)
	}
}

// breakingUpstream streams the first half of an answer and breaks off.
func breakingUpstream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk(w, `{"role":"assistant","content":""}`, "null")
	for _, piece := range strings.SplitAfter(trustPartial, " ") {
		if piece != "" {
			chunk(w, fmt.Sprintf(`{"content":%q}`, piece), "null")
		}
	}
	panic(http.ErrAbortHandler)
}

// wholeUpstream answers a continuation (the request ends with the
// gateway's instruction after an assistant turn) with the rest, anything
// else with the cached story, streamed or whole as asked.
func wholeUpstream(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	text := trustCached
	if n := len(req.Messages); n >= 2 && req.Messages[n-2].Role == "assistant" {
		text = trustRest
	}
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`, fakeInputTokens, fakeOutputTokens, fakeInputTokens+fakeOutputTokens)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-s","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":%s}`,
			req.Model, text, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk(w, `{"role":"assistant","content":""}`, "null")
	for _, piece := range strings.SplitAfter(text, " ") {
		chunk(w, fmt.Sprintf(`{"content":%q}`, piece), "null")
	}
	chunk(w, `{}`, `"stop"`)
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-s\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", usage)
}

func chunk(w http.ResponseWriter, delta, finish string) {
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-s\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
	w.(http.Flusher).Flush()
}
