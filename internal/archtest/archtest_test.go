package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestTheRepositoryFollowsTheMap checks the real import graph.
func TestTheRepositoryFollowsTheMap(t *testing.T) {
	graph := listGraph(t)
	if len(graph) < 20 {
		t.Fatalf("go list reported only %d packages", len(graph))
	}
	for _, v := range Check(Rules, graph) {
		t.Errorf("%s", v)
	}
}

// listGraph asks go list for every package's imports, without building.
func listGraph(t *testing.T) []Package {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`,
		Module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var graph []Package
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(strings.ReplaceAll(sc.Text(), Module, ""), "|")
		if len(f) != 3 {
			t.Fatalf("unexpected go list line %q", sc.Text())
		}
		graph = append(graph, Package{Path: f[0], Imports: strings.Fields(f[1]), TestImports: strings.Fields(f[2])})
	}
	return graph
}

// TestForbiddenImportsAreCaught proves each kind of rule fails on a graph
// that breaks it and passes on one that keeps it.
func TestForbiddenImportsAreCaught(t *testing.T) {
	clean := []Package{
		{Path: "internal/app", Imports: []string{"internal/relay", "internal/admin", "internal/task", "internal/task/taskhttp", "internal/store/sqlstore", "internal/plugin"}},
		{Path: "internal/relay", Imports: []string{"internal/ir", "internal/protocol/openai"}, TestImports: []string{"internal/store/sqlstore"}},
		{Path: "internal/protocol/openai", Imports: []string{"internal/ir", "internal/protocol", "encoding/json"}},
		{Path: "internal/plugin", Imports: []string{"internal/plugin/jsrt"}},
		{Path: "internal/ir", Imports: []string{"errors"}},
		{Path: "internal/task/egress", Imports: []string{"internal/task"}},
		{Path: "internal/task/taskhttp", Imports: []string{"internal/task"}, TestImports: []string{"internal/task/tasktest"}},
		{Path: "internal/task/tasktest", Imports: []string{"internal/store/sqlstore"}},
		{Path: "internal/store/sqlstore", Imports: []string{"internal/store", "database/sql", "github.com/jackc/pgx/v5/stdlib", "modernc.org/sqlite"}},
		{Path: "internal/store/testdb", Imports: []string{"database/sql", "github.com/go-sql-driver/mysql"}},
		{Path: "internal/billing", Imports: []string{"internal/store", "github.com/redis/go-redis/v9"}, TestImports: []string{"internal/store/testdb"}},
		{Path: "internal/upstream/bedrock", Imports: []string{"internal/upstream", "internal/protocol/bedrock"}},
		{Path: "internal/providers", Imports: []string{"internal/upstream", "internal/upstream/bedrock"}},
		{Path: "internal/routing", Imports: []string{"internal/ir", "internal/store", "internal/upstream"}},
		{Path: "internal/admission", Imports: []string{"internal/routing", "internal/billing", "internal/ratelimit", "internal/plans"}},
		{Path: "cmd/turnpike", Imports: []string{"internal/cli"}},
		{Path: "internal/cli", Imports: []string{"internal/app", "internal/admin", "internal/store/sqlstore"}},
		{Path: "internal/testkit", Imports: []string{"internal/app"}},
		{Path: "internal/upstream/bedrock", Imports: []string{"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"}},
		{Path: "internal/batch/s3blobs", Imports: []string{"github.com/aws/aws-sdk-go-v2/service/s3"}},
		{Path: "internal/payments", Imports: []string{"github.com/stripe/stripe-go/v85"}},
		{Path: "internal/plugin/jsrt", Imports: []string{"github.com/grafana/sobek"}},
	}
	if v := Check(Rules, clean); len(v) != 0 {
		t.Fatalf("a graph that keeps the map was refused: %v", v)
	}
	cases := []struct {
		name string
		add  Package
		want string
	}{
		{"codec imports routing", Package{Path: "internal/protocol/gemini", Imports: []string{"internal/ir", "internal/routing"}}, "codecs translate"},
		{"leaf imports config", Package{Path: "internal/ir", Imports: []string{"internal/config"}}, "ir is a leaf"},
		{"relay imported outside app", Package{Path: "internal/admin", Imports: []string{"internal/relay"}}, "only app wires the relay"},
		{"task subpackage imported outside app", Package{Path: "internal/relay", Imports: []string{"internal/task/records"}}, "only app wires the task service"},
		{"admin imported by a test outside app", Package{Path: "internal/billing", TestImports: []string{"internal/admin"}}, "only app wires the admin API"},
		{"sqlstore imported by a service", Package{Path: "internal/books", Imports: []string{"internal/store/sqlstore"}}, "only app and the command line know which store"},
		{"the binary wires the app itself", Package{Path: "cmd/turnpike", Imports: []string{"internal/cli", "internal/app"}}, "the binary only hands"},
		{"task core imports its HTTP surface", Package{Path: "internal/task/egress", Imports: []string{"internal/task/taskhttp"}}, "the task core never imports"},
		{"task test kit in production code", Package{Path: "internal/task", Imports: []string{"internal/task/tasktest"}}, "the task test kit"},
		{"migrated SQLite copies in production code", Package{Path: "internal/accounts", Imports: []string{"internal/store/sqlitetest"}}, "the migrated SQLite copies serve tests only"},
		{"jsrt imported outside plugin", Package{Path: "internal/task", Imports: []string{"internal/plugin/jsrt"}}, "only plugin runs JavaScript"},
		{"jsrt imported by another package's tests", Package{Path: "internal/task", TestImports: []string{"internal/plugin/jsrt"}}, "only plugin runs JavaScript"},
		{"database/sql outside the store, in tests", Package{Path: "internal/accounts", TestImports: []string{"database/sql"}}, "only the store speaks SQL"},
		{"a SQL driver outside the store", Package{Path: "internal/app", Imports: []string{"github.com/jackc/pgx/v5/stdlib"}}, "only the store loads SQL drivers"},
		{"go-redis in a codec", Package{Path: "internal/protocol/openai", Imports: []string{"github.com/redis/go-redis/v9"}}, "go-redis only where"},
		{"stripe outside payments", Package{Path: "internal/admin", Imports: []string{"github.com/stripe/stripe-go/v85/checkout/session"}}, "stripe only in payments"},
		{"the AWS SDK in routing", Package{Path: "internal/routing", Imports: []string{"github.com/aws/aws-sdk-go-v2/aws"}}, "the AWS SDK only where"},
		{"sobek outside jsrt", Package{Path: "internal/plugin", Imports: []string{"github.com/grafana/sobek"}}, "sobek only in jsrt"},
		{"an adapter imports billing", Package{Path: "internal/upstream/vertex", Imports: []string{"internal/upstream", "internal/billing"}}, "adapters build on the codecs only"},
		{"routing imports the adapter catalog", Package{Path: "internal/routing", Imports: []string{"internal/ir", "internal/providers"}}, "routing plans over the adapter seam"},
		{"routing imports an SDK adapter", Package{Path: "internal/routing", Imports: []string{"internal/upstream/bedrock"}}, "routing plans over the adapter seam"},
		{"admission imports the adapter seam", Package{Path: "internal/admission", Imports: []string{"internal/routing", "internal/upstream"}}, "admission builds on"},
		{"billing imports routing", Package{Path: "internal/billing", Imports: []string{"internal/store", "internal/routing"}}, "billing sits below admission"},
		{"a service imports the app", Package{Path: "internal/books", Imports: []string{"internal/app"}}, "only the commands and the test kits"},
		{"the test databases in production code", Package{Path: "internal/books", Imports: []string{"internal/store/testdb"}}, "the test databases serve tests only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			graph := append(append([]Package(nil), clean...), c.add)
			v := Check(Rules, graph)
			if len(v) != 1 || v[0].Rule != ruleNamed(t, c.want) {
				t.Fatalf("violations %v, want one of rule %q", v, c.want)
			}
		})
	}
}

func ruleNamed(t *testing.T, prefix string) string {
	t.Helper()
	for _, r := range Rules {
		if strings.HasPrefix(r.Name, prefix) {
			return r.Name
		}
	}
	t.Fatalf("no rule named %q", prefix)
	return ""
}
