package archtest

import (
	"strings"
	"testing"
)

// The ratchet: how many production files and functions are past their
// budget today. The counts may fall, never rise: a change that adds an
// oversized file or function splits it (by what changes together) or
// splits another one. Lower these when a split brings a count down.
const (
	oversizeFilesAllowed = 7
	oversizeFuncsAllowed = 11
)

// TestSizeBudgetsOnlyShrink reports every production file past
// MaxFileLines and function past MaxFuncLines, and fails when there are
// more than the ratchet allows.
func TestSizeBudgetsOnlyShrink(t *testing.T) {
	files, funcs, err := Measure(productionFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	check := func(kind string, got []Oversize, allowed, budget int) {
		list := make([]string, len(got))
		for i, o := range got {
			list[i] = "  " + o.String()
		}
		switch {
		case len(got) > allowed:
			t.Errorf("%d %s past %d lines, the ratchet allows %d; split one:\n%s", len(got), kind, budget, allowed, strings.Join(list, "\n"))
		case len(got) < allowed:
			t.Logf("%d %s past %d lines, fewer than the %d allowed: lower the ratchet", len(got), kind, budget, allowed)
		}
	}
	check("files", files, oversizeFilesAllowed, MaxFileLines)
	check("functions", funcs, oversizeFuncsAllowed, MaxFuncLines)
}

func TestMeasureFindsWhatIsPastTheBudget(t *testing.T) {
	long := "package p\n\nfunc (s *S) long() {\n" + strings.Repeat("\tx()\n", MaxFuncLines) + "}\n\nfunc short() {}\n"
	files, funcs, err := Measure([]SourceFile{
		{Package: "internal/p", Name: "a.go", Text: long},
		{Package: "internal/p", Name: "big.go", Text: "package p\n" + strings.Repeat("// line\n", MaxFileLines)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) != 1 || funcs[0].Where != "internal/p/a.go:S.long" || funcs[0].Lines != MaxFuncLines+2 {
		t.Fatalf("functions %v", funcs)
	}
	if len(files) != 1 || files[0].Where != "internal/p/big.go" {
		t.Fatalf("files %v", files)
	}
}
