package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const vendorSecret = "vendor-secret-e2e"

// fakeVendor is the asynchronous video vendor behind the Acme plugin
// (internal/task/testdata/pertask.js). The prompt decides each job's fate,
// so one test can show a running, a finished and a failed task.
type fakeVendor struct {
	*httptest.Server
	mu   sync.Mutex
	jobs map[string]string // id → prompt
}

func newFakeVendor(t *testing.T) *fakeVendor {
	v := &fakeVendor{jobs: map[string]string{}}
	v.Server = httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.Close)
	return v
}

// Prompts that end a job; any other prompt keeps it running at 40%.
const (
	promptDone   = "finish quickly"
	promptRefuse = "refuse this one"
	refusal      = "the vendor refused the prompt"
)

func (v *fakeVendor) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+vendorSecret {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/jobs":
		var body struct {
			Prompt string `json:"prompt"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		id := fmt.Sprintf("job-%d", len(v.jobs)+1)
		v.jobs[id] = body.Prompt
		fmt.Fprintf(w, `{"id":%q}`, id)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/jobs/"):
		prompt, ok := v.jobs[strings.TrimPrefix(r.URL.Path, "/v1/jobs/")]
		switch {
		case !ok:
			w.WriteHeader(http.StatusNotFound)
		case prompt == promptDone:
			fmt.Fprint(w, `{"status":"done","progress":100,"url":"https://cdn.acme.test/video.mp4"}`)
		case prompt == promptRefuse:
			fmt.Fprintf(w, `{"status":"failed","error":%q}`, refusal)
		default:
			fmt.Fprint(w, `{"status":"running","progress":40}`)
		}
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// newFakeMarketplace serves an index.json listing e2e/testdata/echo.js
// with its real sha256, as a published marketplace would.
func newFakeMarketplace(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("testdata/echo.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	index := fmt.Sprintf(`{"indexVersion":1,"plugins":[{"key":"echo","name":"Echo Images",
		"description":{"en":"Returns what it is given; for marketplace tests"},"author":{"name":"Turnpike tests"},
		"versions":[{"version":"0.3.0","path":"echo/0.3.0/plugin.js","sha256":%q}]}]}`, hex.EncodeToString(sum[:]))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, index)
		case "/echo/0.3.0/plugin.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(src)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/index.json"
}

// submitTask posts one job to the plugin's native route with the user's key
// and returns the public task id.
func submitTask(t *testing.T, gw *testkit.Gateway, prompt string) string {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"prompt":%q}`, videoModel, prompt)
	resp := gw.DoRaw(t, http.MethodPost, "/acme/v1/videos", userKey, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || !strings.HasPrefix(out.ID, "task_") {
		t.Fatalf("submit through the plugin route: %d %s", resp.StatusCode, raw)
	}
	return out.ID
}
