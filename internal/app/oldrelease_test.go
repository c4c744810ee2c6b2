package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// olderRelease is a state of main that landed before this one (schema 121:
// prices on the model's row, seed marks of its own struct form). Another
// landed commit can be named in TURNPIKE_TEST_OLD_RELEASE.
const olderRelease = "84ebd9f"

// buildOlderRelease builds the gateway as it was at commit into a
// temporary folder, from the repository's own history (git archive: the
// repository's worktree list is left alone).
func buildOlderRelease(t *testing.T, commit string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the older release with")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git command to read the older release from the history")
	}
	src := t.TempDir()
	archive := exec.Command("sh", "-c", fmt.Sprintf(`cd "$(git rev-parse --show-toplevel)" && git archive %s | tar -x -C %s`, commit, src))
	if out, err := archive.CombinedOutput(); err != nil {
		t.Skipf("release %s is not in this checkout's history: %v\n%s", commit, err, out)
	}
	bin := filepath.Join(t.TempDir(), "turnpike-old")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/turnpike")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building release %s: %v\n%s", commit, err, out)
	}
	return bin
}

func rootCall(t *testing.T, base, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer upgrade-root-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// An older release and this one serve one migrated database side by side:
// a price the older node changes is the price the new node charges and
// shows, an administrator's edit made on the older release survives the
// new release's first start, and the new node answers calls (no 503
// "rebuilding live balances", no 500).
func TestAnOlderReleaseAndThisOneServeOneMigratedDatabase(t *testing.T) {
	if os.Getenv("TURNPIKE_TEST_OLD_RELEASES") == "" {
		t.Skip("set TURNPIKE_TEST_OLD_RELEASES=1 to build an older release from the history (about a minute)")
	}
	commit := olderRelease
	if c := os.Getenv("TURNPIKE_TEST_OLD_RELEASE"); c != "" {
		commit = c
	}
	oldBin := buildOlderRelease(t, commit)
	newBin := buildGateway(t)
	up := delayedUpstream(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "shared.db")
	cfg := fmt.Sprintf(`database: "sqlite:%s"
root_token: "upgrade-root-token"
users:
  - {username: alice, password: "alice-pass-123", role: user, quota: 100000000}
tokens:
  - {name: k, user: alice, key: "sk-upgrade-alice", quota: -1}
channels:
  - {name: up, type: openai, base_url: %q, key: k, models: [m], weight: 1}
models:
  m: {input_per_mtok: 1, output_per_mtok: 2}
`, dbPath, up.URL)
	cfgPath := filepath.Join(dir, "turnpike.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	old := startGateway(t, oldBin, cfgPath)
	old.showLogOnFailure(t, "older release")
	if code, _ := rootCall(t, old.url, "PATCH", "/api/channels/1", `{"weight":7}`); code != 200 {
		t.Fatalf("editing the channel on the older release: %d", code)
	}
	old.stop(t)

	migrate := exec.Command(newBin, "migrate", "--config", cfgPath)
	out, err := migrate.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "applied migration 122 model price versions") {
		t.Fatalf("migrate: %v\n%s", err, out)
	}

	old = startGateway(t, oldBin, cfgPath)
	defer old.stop(t)
	cur := startGateway(t, newBin, cfgPath)
	cur.showLogOnFailure(t, "this release")
	defer cur.stop(t)

	if _, ch := rootCall(t, cur.url, "GET", "/api/channels/1", ""); ch["weight"] != float64(7) {
		t.Errorf("the channel's weight on the new release is %v, want the administrator's 7", ch["weight"])
	}
	if code, _ := rootCall(t, old.url, "PUT", "/api/models/m", `{"input_per_mtok":1500,"output_per_mtok":3000}`); code != 200 {
		t.Fatalf("changing the price on the older release: %d", code)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, p := rootCall(t, cur.url, "GET", "/api/models/m", "")
		if p["input_per_mtok"] == float64(1500) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new node still shows %v for the price the older node set", p)
		}
		time.Sleep(200 * time.Millisecond)
	}
	req, _ := http.NewRequest("POST", cur.url+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-upgrade-alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a call on the new node beside the older one: %d %s", resp.StatusCode, raw)
	}
}
