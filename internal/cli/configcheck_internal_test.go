package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Everything serve would refuse is found by one run of config check, each
// problem with its line, and the check writes nothing: the SQLite file it
// names is not created.
func TestConfigCheckFindsWhatServeRefusesInOneRunWithoutWriting(t *testing.T) {
	dir := t.TempDir()
	yaml := filepath.Join(dir, "turnpike.yaml")
	body := `listen: ":3000"
log_level: loud
redsi: "redis://x"
users:
  - {username: alice, password: "alice-pass", role: user}
tokens:
  - {name: k1, user: alice, key: "sk-1"}
  - {name: k2, user: nobody, key: "sk-2"}
channels:
  - {name: bad-type, type: warp-drive, base_url: "http://127.0.0.1:1", key: k, models: [m]}
  - {name: bad-threshold, type: openai, base_url: "http://127.0.0.1:1", key: k, models: [m], settings: {failure_threshold: -2}}
models:
  m: {input_per_mtok: -1}
`
	if err := os.WriteFile(yaml, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	dbFile := filepath.Join(dir, "data", "never.db")
	var out, errOut bytes.Buffer
	code := Main([]string{"config", "check", "--config", yaml}, &out, &errOut, envOf(map[string]string{"TURNPIKE_DATABASE": "sqlite:" + dbFile}))
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, out.String(), errOut.String())
	}
	text := out.String()
	for _, want := range []string{
		`line 2: log_level`, `line 3: unknown setting redsi`, `did you mean "redis"?`,
		`line 8: key k2: user nobody does not exist`,
		`line 10: channel bad-type`, `line 11: channel bad-threshold`, `failure_threshold`,
		`line 13: model m`,
		"redis: not configured",
		"the first start creates it",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "key k1") {
		t.Errorf("a key of a user the file creates was reported:\n%s", text)
	}
	if strings.Contains(strings.ToLower(text), "redis fine") || strings.Contains(text, "redis are fine") {
		t.Errorf("claims redis is fine without one configured:\n%s", text)
	}
	if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
		t.Errorf("config check created the database file (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Dir(dbFile)); !os.IsNotExist(err) {
		t.Errorf("config check created the database directory (stat: %v)", err)
	}
}

// migrate says what it applied, then that nothing was left; config check
// lists what a database still lacks.
func TestMigratePrintsWhatItAppliedAndConfigCheckListsPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	env := envOf(map[string]string{"TURNPIKE_DATABASE": "sqlite:" + path})
	var first, second, errOut bytes.Buffer
	if code := Main([]string{"migrate"}, &first, &errOut, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(first.String(), "applied migration 1 core") || !strings.Contains(first.String(), "migration(s) applied") {
		t.Fatalf("first migrate said:\n%s", first.String())
	}
	if code := Main([]string{"migrate"}, &second, &errOut, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(second.String(), "up to date at version") || strings.Contains(second.String(), "applied migration") {
		t.Fatalf("second migrate said:\n%s", second.String())
	}
	var check bytes.Buffer
	if code := Main([]string{"config", "check"}, &check, &errOut, env); code != 0 {
		t.Fatalf("check exit %d:\n%s", code, check.String())
	}
	if !strings.Contains(check.String(), "schema up to date at version") {
		t.Fatalf("check said:\n%s", check.String())
	}
}

// A group's and a key's log_content (CONTRACT §20) are checked by config
// check with the admin API's rules, each at its line.
func TestConfigCheckChecksLogContent(t *testing.T) {
	dir := t.TempDir()
	yaml := filepath.Join(dir, "turnpike.yaml")
	body := `groups:
  audited: {ratio: 1, log_content: {enabled: true, max_kb: 0}}
  fine: {ratio: 1, log_content: {enabled: true}}
users:
  - {username: alice, password: "alice-pass", role: user, group: audited}
tokens:
  - {name: k1, user: alice, key: "sk-1", log_content: {enabled: true, keep: all}}
`
	if err := os.WriteFile(yaml, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"config", "check", "--config", yaml}, &out, &errOut,
		envOf(map[string]string{"TURNPIKE_DATABASE": "sqlite:" + filepath.Join(dir, "never.db")}))
	text := out.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, text, errOut.String())
	}
	for _, want := range []string{"group audited: log_content.max_kb must be", "key k1: log_content has unknown field keep"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "group fine") {
		t.Errorf("a good group was reported:\n%s", text)
	}
}
