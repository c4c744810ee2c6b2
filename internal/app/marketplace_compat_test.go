package app_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// marketplaceDirEnv overrides where the published marketplace copy is read.
const marketplaceDirEnv = "TURNPIKE_MARKETPLACE_DIR"

// marketplaceDir finds the unchanged copy of the published marketplace:
// the env override, else ../shared/marketplace beside the repository root.
func marketplaceDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(marketplaceDirEnv); dir != "" {
		return dir
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "..", "shared", "marketplace")
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// marketIndex is the part of the published index.json the test reads.
type marketIndex struct {
	Plugins []struct {
		Key          string `json:"key"`
		ChannelTypes []int  `json:"channelTypes"`
		Latest       string `json:"latest"`
		Versions     []struct {
			Version string `json:"version"`
			Path    string `json:"path"`
			SHA256  string `json:"sha256"`
		} `json:"versions"`
	} `json:"plugins"`
}

func readMarketIndex(t *testing.T, dir string) marketIndex {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx marketIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	return idx
}

// TestPublishedMarketplacePluginsRunUnchanged is the compatibility check
// over the real marketplace: every published plugin passes `plugin check`,
// installs through the marketplace API from a server that serves the folder
// as it is, and runs one background Responses task (submit, poll, success)
// against a fake vendor that checks the requests it gets.
func TestPublishedMarketplacePluginsRunUnchanged(t *testing.T) {
	dir := marketplaceDir(t)
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		t.Skipf("the published marketplace copy is not at %s (set %s to point at it): %v", dir, marketplaceDirEnv, err)
	}
	idx := readMarketIndex(t, dir)
	if len(idx.Plugins) == 0 {
		t.Fatal("the index lists no plugins")
	}
	vendors := marketVendors(t)
	for _, p := range idx.Plugins {
		if _, ok := vendors[p.Key]; !ok {
			t.Errorf("plugin %s has no fake vendor in this test; add one", p.Key)
		}
	}

	market := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(market.Close)
	prices := map[string]config.SeedPrice{}
	for _, v := range vendors {
		prices[v.model] = config.SeedPrice{PerCall: 0.01}
	}
	g := testkit.Start(t,
		testkit.WithRootToken("root-secret"),
		testkit.WithPollInterval(50*time.Millisecond),
		testkit.WithUsers(config.SeedUser{Username: "mia", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "mia", Key: "sk-market-user"}),
		testkit.WithModels(prices),
	)
	source := market.URL + "/index.json"
	if code, body := g.Do(t, "POST", "/api/plugin/task/marketplace/sources", "root-secret", map[string]any{"url": source}); code != 200 {
		t.Fatalf("adding the marketplace source: %d %v", code, body)
	}

	for _, p := range idx.Plugins {
		v := vendors[p.Key]
		if v == nil {
			continue
		}
		t.Run(p.Key, func(t *testing.T) {
			ver := p.Versions[len(p.Versions)-1]
			for _, candidate := range p.Versions {
				if candidate.Version == p.Latest {
					ver = candidate
				}
			}
			file := filepath.Join(dir, filepath.FromSlash(ver.Path))
			checkPublishedFile(t, file, ver.SHA256)
			installFromMarket(t, g, source, p.Key, ver.Version)
			srv := v.start(t)
			bindChannel(t, g, p.Key, p.ChannelTypes[0], srv.URL, v)
			runBackgroundResponse(t, g, v)
			v.assertSawWholeCycle(t)
		})
	}
}

// checkPublishedFile checks the file is the one the index describes and
// passes `turnpike plugin check` with no problems.
func checkPublishedFile(t *testing.T, file, wantSHA string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != wantSHA {
		t.Fatalf("%s has sha256 %s but the index says %s; the copy must be unchanged", file, got, wantSHA)
	}
	var out bytes.Buffer
	if !plugin.CheckFile(file, &out) {
		t.Fatalf("plugin check refused the published plugin:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "supports inferred from the exported render hooks") {
		t.Errorf("plugin check did not say which std_responses modes it inferred:\n%s", out.String())
	}
}

func installFromMarket(t *testing.T, g *testkit.Gateway, source, key, version string) {
	t.Helper()
	code, body := g.Do(t, "POST", "/api/plugin/task/marketplace/install", "root-secret",
		map[string]any{"source": source, "key": key, "version": version})
	if code != 200 || body["active"] != true || body["enabled"] != true {
		t.Fatalf("install %s@%s: %d %v", key, version, code, body)
	}
	inferred, _ := body["inferred"].([]any)
	if len(inferred) != 1 {
		t.Errorf("the install answer should name the inferred std_responses modes: %v", body)
	}
}

func bindChannel(t *testing.T, g *testkit.Gateway, key string, channelType int, baseURL string, v *marketVendor) {
	t.Helper()
	code, body := g.Do(t, "POST", "/api/channels", "root-secret", map[string]any{
		"name": "market-" + key, "type": channelType, "base_url": baseURL, "key": v.channelKey(baseURL),
		"models": []string{v.model}, "groups": []string{"default"}})
	if code != 200 {
		t.Fatalf("channel for %s: %d %v", key, code, body)
	}
}

// runBackgroundResponse submits one background Responses request and polls
// GET /v1/responses/{id} until the task completes.
func runBackgroundResponse(t *testing.T, g *testkit.Gateway, v *marketVendor) {
	t.Helper()
	code, created := g.Do(t, "POST", "/v1/responses", "sk-market-user",
		map[string]any{"model": v.model, "input": marketPrompt, "background": true})
	id, _ := created["id"].(string)
	if code != 200 || id == "" {
		t.Fatalf("submit: %d %v", code, created)
	}
	var got map[string]any
	if !testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool {
		_, got = g.Do(t, "GET", "/v1/responses/"+id, "sk-market-user", nil)
		return got["status"] == "completed" || got["status"] == "failed"
	}) || got["status"] != "completed" {
		t.Fatalf("response %s did not complete: %v", id, got)
	}
	if out, _ := got["output"].([]any); len(out) == 0 {
		t.Errorf("the completed response has no output: %v", got)
	}
	_, task := g.Do(t, "GET", "/v1/tasks/"+id, "sk-market-user", nil)
	if task["status"] != "SUCCESS" {
		t.Errorf("task view: %v", task)
	}
	if strings.Contains(jsonText(got)+jsonText(task), secretMarker) {
		t.Error("a channel secret leaked into a client answer")
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// marketPrompt is what the client asks for; every vendor checks it arrives.
const marketPrompt = "a red fox crossing a snowy field"

// secretMarker is part of every channel key, so a leak is easy to spot.
const secretMarker = "chan-secret"

// marketVendor is a fake vendor for one published plugin: the submit it
// expects, the status query it expects, and what it answers to each.
type marketVendor struct {
	model string
	// key is the channel key; "" means the vendor builds one (vertex's
	// service-account JSON names the vendor's token endpoint).
	key    string
	keyFor func(baseURL string) string
	// auth checks the credentials of each upstream request.
	auth        func(r *http.Request) string
	submitPath  string
	submitReply string
	queryMethod string
	queryPath   string
	queryReply  string
	// extra serves requests besides submit and query (a token endpoint).
	extra func(w http.ResponseWriter, r *http.Request) bool

	mu               sync.Mutex
	submits, queries int
	problems         []string
}

func (v *marketVendor) channelKey(baseURL string) string {
	if v.keyFor != nil {
		return v.keyFor(baseURL)
	}
	return v.key
}

func (v *marketVendor) fail(format string) {
	v.problems = append(v.problems, format)
}

// start serves the vendor. Anything it does not expect is answered 400 and
// recorded, so the test reports what the plugin sent wrong.
func (v *marketVendor) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v.extra != nil && v.extra(w, r) {
			return
		}
		body := new(bytes.Buffer)
		_, _ = body.ReadFrom(r.Body)
		v.mu.Lock()
		defer v.mu.Unlock()
		if msg := v.auth(r); msg != "" {
			v.fail(r.Method + " " + r.URL.String() + ": " + msg)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch target := r.URL.RequestURI(); {
		case r.Method == http.MethodPost && target == v.submitPath:
			v.submits++
			if !strings.Contains(body.String(), marketPrompt) {
				v.fail("the submit body lacks the client's prompt: " + body.String())
			}
			_, _ = w.Write([]byte(v.submitReply))
		case r.Method == v.queryMethod && target == v.queryPath:
			v.queries++
			_, _ = w.Write([]byte(v.queryReply))
		default:
			v.fail("unexpected " + r.Method + " " + target + " " + body.String())
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (v *marketVendor) assertSawWholeCycle(t *testing.T) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, p := range v.problems {
		t.Error("vendor: " + p)
	}
	if v.submits != 1 || v.queries < 1 {
		t.Errorf("vendor saw %d submit(s) and %d status query(ies); want one submit and at least one query", v.submits, v.queries)
	}
}
