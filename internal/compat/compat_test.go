// Package compat drives the real gateway with the official client libraries
// of each wire format (the Node project in compat/ at the module root)
// against three deterministic fake upstreams, one per channel kind, and then
// checks that every answered call was billed.
package compat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	clientKey  = "sk-turnpike-compat-client"
	limitedKey = "sk-turnpike-compat-limited" // allowed only the first model
	brokeKey   = "sk-turnpike-compat-broke"   // its user has 1 quota unit
	// Prices chosen so a fake answer (21 in, 9 out) costs a whole number of
	// quota units at the default 500000 units per USD: 21 + 18.
	inputPerMTok  = 2.0
	outputPerMTok = 4.0
	wantQuota     = 39
	// A bound for a hang, not a speed check: at load 25 on two cores the
	// suite needed more than 100 s (CI, 2026-12-07) while quiet it takes
	// under 40.
	nodeTimeout = 240 * time.Second
)

func TestOfficialClientLibraries(t *testing.T) {
	dir, node := requireNode(t)
	fakes := map[string]*fake{
		"up-openai":    startFake(t, "openai", "up-openai-key", openAIUpstreamFake("up-openai", "up-openai-key")),
		"up-anthropic": startFake(t, "anthropic", "up-anthropic-key", anthropicFake("up-anthropic", "up-anthropic-key")),
		"up-gemini": startFake(t, "gemini", "up-gemini-key",
			geminiEmbedFake(geminiFake("up-gemini", "up-gemini-key"), geminiEmbedModel, "up-gemini-key")),
	}
	// Batches have an upstream of their own: a batch bills once for many
	// answers, which the per-answer check of the chat fakes cannot count.
	batchFake := startFake(t, "anthropic", "up-batch-key", anthropicFake(batchModel, "up-batch-key"))
	seed := seedFor(fakes)
	weight := 1
	seed.Channels = append(seed.Channels, config.SeedChannel{Name: "compat-batches", Type: "anthropic", BaseURL: batchFake.srv.URL,
		Key: batchFake.key, Models: []string{batchModel}, Groups: []string{"default"}, Weight: &weight, Status: "enabled"})
	// On failure the kit shows the gateway's log after this report.
	gw := testkit.Start(t, testkit.WithSeed(seed), testkit.WithRootToken(compatRoot))
	mcpFake := startMCPFake(t)
	registerMCP(t, gw, mcpFake)

	out, err := runNode(t, dir, node, gw.URL, modelNames(fakes))
	if err != nil {
		t.Errorf("node --test failed (%v); its report:\n%s", err, out)
	} else if testing.Verbose() {
		t.Logf("node --test passed:\n%s", out)
	} else {
		t.Logf("node --test passed:\n%s", summary(out))
	}
	for _, name := range modelNames(fakes) {
		problems, _ := fakes[name].snapshot()
		for _, p := range problems {
			t.Logf("refused by the upstream (a real provider would refuse it too): %s", p)
		}
	}
	checkBilling(t, gw.App.Store, fakes)
	checkEndpointBilling(t, gw.App.Store, fakes)
	checkMCPBilling(t, gw.App.Store, mcpFake)
}

// requireNode finds compat/ and node; without them the test skips, unless
// TURNPIKE_COMPAT=1 says this run must exercise the client libraries.
func requireNode(t *testing.T) (dir, node string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs real clients under node (CI runs them in its plain pass, not again under -race)")
	}
	must := os.Getenv("TURNPIKE_COMPAT") == "1"
	dir, err := filepath.Abs(filepath.Join("..", "..", "compat"))
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules"))
	}
	if err == nil {
		node, err = exec.LookPath("node")
	}
	if err != nil {
		msg := fmt.Sprintf("official client library tests need node and compat/node_modules (run: cd compat && npm ci): %v", err)
		if must {
			t.Fatal("TURNPIKE_COMPAT=1 but " + msg)
		}
		t.Skip(msg)
	}
	return dir, node
}

func modelNames(fakes map[string]*fake) []string {
	names := make([]string, 0, len(fakes))
	for n := range fakes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// seedFor makes one channel per fake; a fake's kind is also its channel
// type name (openai = 1, anthropic = 14, gemini = 24).
func seedFor(fakes map[string]*fake) config.Seed {
	unlimited := int64(-1)
	weight := 1
	seed := config.Seed{
		Groups: map[string]float64{"default": 1},
		Users: []config.SeedUser{
			{Username: "compat", Password: "compat-password", Role: "user", Group: "default", Quota: 100_000_000},
			{Username: "compat-broke", Password: "compat-password", Role: "user", Group: "default", Quota: 1},
		},
		Tokens: []config.SeedToken{
			{Name: "compat-key", User: "compat", Key: clientKey, Quota: &unlimited},
			{Name: "compat-limited", User: "compat", Key: limitedKey, Quota: &unlimited, Models: modelNames(fakes)[:1]},
			{Name: "compat-broke", User: "compat-broke", Key: brokeKey, Quota: &unlimited},
		},
		Models: map[string]config.SeedPrice{},
	}
	extra := map[string][]string{"openai": openAIEndpointModels, "gemini": {geminiEmbedModel}}
	for _, model := range modelNames(fakes) {
		f := fakes[model]
		seed.Channels = append(seed.Channels, config.SeedChannel{
			Name: "compat-" + f.kind, Type: f.kind, BaseURL: f.srv.URL, Key: f.key,
			Models: append([]string{model}, extra[f.kind]...), Groups: []string{"default"}, Weight: &weight, Status: "enabled",
		})
		seed.Models[model] = config.SeedPrice{InputPerMTok: inputPerMTok, OutputPerMTok: outputPerMTok}
		if f.kind == "openai" {
			// Search goes only to channels marked for it; the OpenAI
			// channel is not, so its models answer search with a 400.
			seed.Channels = append(seed.Channels, config.SeedChannel{
				Name: "compat-openai-search", Type: f.kind, BaseURL: f.srv.URL, Key: f.key,
				Models: []string{searchModel}, Groups: []string{"default"}, Weight: &weight, Status: "enabled",
				Settings: map[string]any{"supports_search": true},
			})
		}
	}
	for model, price := range endpointPrices {
		seed.Models[model] = price
	}
	return seed
}

// runNode runs the Node test files with the gateway's address and key. The
// SDKs read provider variables from the environment, so those are dropped to
// keep the run hermetic.
func runNode(t *testing.T, dir, node, url string, models []string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	args := []string{"--test", "--test-reporter=spec"}
	// TURNPIKE_COMPAT_FILES narrows a run to some test files while working on them.
	args = append(args, strings.Fields(os.Getenv("TURNPIKE_COMPAT_FILES"))...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(hermeticEnv(os.Environ()),
		"TURNPIKE_URL="+url, "TURNPIKE_KEY="+clientKey, "TURNPIKE_MODELS="+strings.Join(models, ","),
		"TURNPIKE_LIMITED_KEY="+limitedKey, "TURNPIKE_BROKE_KEY="+brokeKey,
		"TURNPIKE_FAKES=1", "TURNPIKE_MCP_SERVER="+mcpServerName, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost", "NO_COLOR=1")
	for name, model := range endpointModelEnv {
		cmd.Env = append(cmd.Env, "TURNPIKE_MODEL_"+name+"="+model)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("node did not finish within %s: %w", nodeTimeout, err)
	}
	return out.String(), err
}

func hermeticEnv(env []string) []string {
	var keep []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		switch {
		case strings.HasPrefix(upper, "OPENAI_"), strings.HasPrefix(upper, "ANTHROPIC_"),
			strings.HasPrefix(upper, "GOOGLE_"), strings.HasPrefix(upper, "GEMINI_"),
			strings.HasPrefix(upper, "TURNPIKE_"), strings.HasSuffix(upper, "_PROXY"):
			continue
		}
		keep = append(keep, kv)
	}
	return keep
}

// summary keeps the totals at the end of a spec report.
func summary(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "ℹ") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// checkBilling waits for the usage log writer and then requires one consume
// row per answer each fake gave, each with the fake's usage and price.
func checkBilling(t *testing.T, st store.Store, fakes map[string]*fake) {
	t.Helper()
	ctx := context.Background()
	for _, model := range modelNames(fakes) {
		_, answered := fakes[model].snapshot()
		want := answered[model]
		if want == 0 {
			t.Errorf("%s: the upstream never answered successfully, so nothing reached channel kind %s", model, fakes[model].kind)
			continue
		}
		rows := waitForRows(ctx, t, st, model, want)
		if len(rows) != want {
			t.Errorf("%s: %d consume rows for %d upstream answers", model, len(rows), want)
		}
		for _, r := range rows {
			if r.PromptTokens != fakeInputTokens || r.CompletionTokens != fakeOutputTokens || r.Quota != wantQuota {
				t.Errorf("%s: consume row %d billed %d in / %d out / quota %d, want the upstream's %d / %d / %d (other: %s)",
					model, r.ID, r.PromptTokens, r.CompletionTokens, r.Quota, fakeInputTokens, fakeOutputTokens, wantQuota, r.Other)
			}
		}
	}
}

func waitForRows(ctx context.Context, t *testing.T, st store.Store, model string, want int) []store.UsageLog {
	t.Helper()
	var rows []store.UsageLog
	testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
		var err error
		rows, _, err = st.Logs().List(ctx, store.LogFilter{Type: store.LogConsume, Model: model}, store.Page{Page: 1, PageSize: 1000})
		if err != nil {
			t.Fatalf("list usage logs: %v", err)
		}
		return len(rows) >= want
	})
	return rows
}
