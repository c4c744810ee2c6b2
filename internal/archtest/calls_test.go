package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallsStayWithTheirOwners checks the call rules on the repository.
func TestCallsStayWithTheirOwners(t *testing.T) {
	files := productionFiles(t)
	if len(files) < 100 {
		t.Fatalf("found only %d production files", len(files))
	}
	for _, v := range CheckCalls(CallRules, files) {
		t.Errorf("%s", v)
	}
}

func TestCallsOutsideTheirOwnersAreCaught(t *testing.T) {
	files := []SourceFile{
		{Package: "internal/users", Name: "users.go", Text: "s.Users.Create(ctx, u); st.Users().Create(ctx, u)"},
		{Package: "internal/billing", Name: "service.go", Text: "s.balances.AddUser(ctx, id, d)"},
		{Package: "internal/store/storetest", Name: "users.go", Text: "s.Users().Create(ctx(t), u)"},
	}
	if v := CheckCalls(CallRules, files); len(v) != 0 {
		t.Fatalf("owners refused: %v", v)
	}
	for _, f := range []SourceFile{
		{Package: "internal/admin", Name: "seed.go", Text: "d.Store.Users().Create(ctx, u)"},
		{Package: "internal/admin", Name: "users.go", Text: "a.d.Billing.Balances().AddUser(ctx, id, 5)"},
		{Package: "internal/relay", Name: "x.go", Text: "b.AddToken(ctx, id, 5)"},
	} {
		if v := CheckCalls(CallRules, append(files, f)); len(v) != 1 || v[0].File != f.Package+"/"+f.Name {
			t.Errorf("%s/%s: violations %v, want one", f.Package, f.Name, v)
		}
	}
}

// productionFiles reads every non-test Go file of the module but this
// package's.
func productionFiles(t *testing.T) []SourceFile {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(out))
	var files []SourceFile
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if filepath.ToSlash(rel) == "internal/archtest" {
			return nil // the rule table names the calls it keeps
		}
		files = append(files, SourceFile{Package: filepath.ToSlash(rel), Name: d.Name(), Text: string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
