package archtest

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyAdmissionMovesMoney type-checks every package's production code
// against the compiler's export data and lists its calls of billing's
// money-moving methods.
func TestOnlyAdmissionMovesMoney(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	pkgs, exports := listExports(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	var calls []MoneyCall
	checked := 0
	for _, p := range pkgs {
		files := make([]*ast.File, 0, len(p.files))
		for _, name := range p.files {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
			if err != nil {
				t.Fatalf("parse %s: %v", name, err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		if _, err := conf.Check(p.path, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.path, err)
		}
		checked++
		calls = append(calls, MoneyCalls(strings.TrimPrefix(p.path, Module), files, info)...)
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked", checked)
	}
	if len(calls) == 0 {
		t.Fatal("no money-moving call found anywhere: the check sees nothing")
	}
	for _, v := range CheckMoney(MoneyRules, calls) {
		t.Error(v)
	}
}

type listedPkg struct {
	path, dir string
	files     []string
}

// listExports asks go list for the module's packages and the export data
// of everything they import (building what is not cached).
func listExports(t *testing.T) ([]listedPkg, map[string]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-f",
		`{{.ImportPath}}|{{.Export}}|{{.Dir}}|{{join .GoFiles " "}}|{{join .CgoFiles " "}}`, Module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	var pkgs []listedPkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 5 {
			t.Fatalf("unexpected go list line %q", sc.Text())
		}
		exports[f[0]] = f[1]
		if strings.HasPrefix(f[0], Module) && f[4] == "" && f[3] != "" {
			pkgs = append(pkgs, listedPkg{path: f[0], dir: f[2], files: strings.Fields(f[3])})
		}
	}
	return pkgs, exports
}

// TestAMoneyCallOutsideItsPackagesIsCaught proves the rule refuses a
// hold ended outside admission and money put in outside the admin API,
// and lets admission and billing itself do both.
func TestAMoneyCallOutsideItsPackagesIsCaught(t *testing.T) {
	calls := []MoneyCall{
		{From: "internal/admission", Method: "Hold.SettleNow"},
		{From: "internal/admission", Method: "Service.Reserve"},
		{From: "internal/billing", Method: "Hold.Refund"},
		{From: "internal/admin", Method: "Service.TopUp"},
		{From: "internal/relay", Method: "Service.Price"},
	}
	if v := CheckMoney(MoneyRules, calls); len(v) != 0 {
		t.Fatalf("allowed calls refused: %v", v)
	}
	for _, c := range []MoneyCall{
		{From: "internal/batch", Method: "Service.Reserve"},
		{From: "internal/task", Method: "Hold.SettleNow"},
		{From: "internal/relay", Method: "Hold.Keep"},
		{From: "internal/relay", Method: "Service.TopUp"},
	} {
		if v := CheckMoney(MoneyRules, []MoneyCall{c}); len(v) != 1 {
			t.Errorf("%v: violations %v, want one", c, v)
		}
	}
}
