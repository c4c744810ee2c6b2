package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/cli"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const dumpRoot = "root-token-for-the-move-test"

func runCLI(t *testing.T, db string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "TURNPIKE_DATABASE" {
			return db
		}
		return ""
	}
	if code := cli.Main(args, &out, &errOut, env); code != 0 {
		t.Fatalf("turnpike %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// balances reads every user's balance and used quota through the API.
func balances(t *testing.T, g *testkit.Gateway) map[string]string {
	t.Helper()
	code, body := g.Do(t, "GET", "/api/users?page_size=100", dumpRoot, nil)
	if code != 200 {
		t.Fatalf("list users: %d %v", code, body)
	}
	out := map[string]string{}
	for _, it := range body["items"].([]any) {
		u := it.(map[string]any)
		out[u["username"].(string)] = fmt.Sprintf("id %v quota %v used %v", u["id"], u["quota"], u["used_quota"])
	}
	return out
}

// The way from SQLite to PostgreSQL or MySQL (CONTRACT §16): export from
// a gateway's SQLite database, import into a new database, and a gateway on
// that database authenticates the same keys and shows the same balances.
func TestAMoveFromSQLiteKeepsKeysAndBalances(t *testing.T) {
	const key = "sk-alice-key-that-moves"
	src := testkit.Start(t, testkit.WithRootToken(dumpRoot),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: 9000}),
		testkit.WithTokens(config.SeedToken{Name: "alice-key", User: "alice", Key: key}))
	code, body := src.Do(t, "GET", "/api/users?page_size=100", dumpRoot, nil)
	if code != 200 {
		t.Fatalf("list users: %d", code)
	}
	for _, it := range body["items"].([]any) {
		if u := it.(map[string]any); u["username"] == "alice" {
			if c, b := src.Do(t, "POST", fmt.Sprintf("/api/users/%v/quota", u["id"]), dumpRoot, map[string]any{"delta": -250}); c != 200 {
				t.Fatalf("adjust: %d %v", c, b)
			}
		}
	}
	want := balances(t, src)
	if !strings.Contains(want["alice"], "quota 8750") {
		t.Fatalf("alice before the move: %q, want quota 8750", want["alice"])
	}
	src.Stop()
	dump := filepath.Join(t.TempDir(), "turnpike.jsonl")
	runCLI(t, src.App.Config.Database, "export", "--out", dump, "--with-secrets")

	targets := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "moved.db") },
	}
	if pg := os.Getenv("TURNPIKE_TEST_POSTGRES"); pg != "" {
		targets["postgres"] = func(t *testing.T) string { return testdb.Postgres(t, pg) }
	}
	if my := os.Getenv("TURNPIKE_TEST_MYSQL"); my != "" {
		targets["mysql"] = func(t *testing.T) string { return testdb.MySQL(t, my) }
	}
	for name, fresh := range targets {
		t.Run(name, func(t *testing.T) {
			db := fresh(t)
			if out := runCLI(t, db, "import", dump); !strings.Contains(out, "imported") {
				t.Fatalf("import said %q", out)
			}
			dst := testkit.Start(t, testkit.WithRootToken(dumpRoot), testkit.WithConfig(func(c *config.Config) { c.Database = db }))
			if got := balances(t, dst); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("balances after the move = %v, want %v", got, want)
			}
			if c, b := dst.Do(t, "GET", "/v1/models", key, nil); c != 200 {
				t.Errorf("the moved key: %d %v", c, b)
			}
			if c, _ := dst.Do(t, "GET", "/v1/models", "sk-not-a-key-of-anyone", nil); c != 401 {
				t.Errorf("a wrong key: %d, want 401", c)
			}
			// A second import into the now populated database is refused.
			var out, errOut bytes.Buffer
			env := func(k string) string {
				if k == "TURNPIKE_DATABASE" {
					return db
				}
				return ""
			}
			if code := cli.Main([]string{"import", dump}, &out, &errOut, env); code != 1 || !strings.Contains(errOut.String(), "already holds records") {
				t.Errorf("second import: exit %d, %q", code, errOut.String())
			}
		})
	}
}

func TestExportRefusesToOverwriteAFile(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(existing, []byte("an older backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "TURNPIKE_DATABASE" {
			return "sqlite:" + filepath.Join(dir, "t.db")
		}
		return ""
	}
	if code := cli.Main([]string{"export", "--out", existing}, &out, &errOut, env); code != 1 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if b, _ := os.ReadFile(existing); string(b) != "an older backup" {
		t.Fatalf("the older file was changed: %q", b)
	}
}
