package archtest

import (
	"fmt"
	"sort"
	"strings"
)

// CallRule keeps one call in the package that owns what it does. Imports
// cannot say it: every package that holds a store may call Users().Create,
// and every holder of billing.Balances may move one. Call is matched as
// text in production files (not _test.go).
type CallRule struct {
	Name string
	Call string
	// OnlyIn lists the package patterns whose files may make the call.
	OnlyIn []string
}

// CallRules are the calls with one owner.
var CallRules = []CallRule{
	// Users come to exist one way, under one set of rules; the store's
	// conformance suite and the task test kit make fixtures directly.
	{Name: "only users creates users", Call: "Users().Create(",
		OnlyIn: []string{"internal/users", "internal/store/...", "internal/task/tasktest"}},
	// Money from outside the calls goes through billing.Service.Credit,
	// which records every move; a balance moved elsewhere has no ledger row.
	{Name: "only billing moves balances", Call: ".AddUser(", OnlyIn: []string{"internal/billing"}},
	{Name: "only billing moves balances", Call: ".AddToken(", OnlyIn: []string{"internal/billing"}},
}

// SourceFile is one production Go file: its package path relative to the
// module and its text.
type SourceFile struct {
	Package, Name, Text string
}

// CallViolation is a call made outside its owners.
type CallViolation struct{ Rule, File, Call string }

func (v CallViolation) String() string {
	return fmt.Sprintf("%s: %s calls %s", v.Rule, v.File, v.Call)
}

// CheckCalls returns every call in files that rules keep elsewhere, sorted.
func CheckCalls(rules []CallRule, files []SourceFile) []CallViolation {
	var out []CallViolation
	for _, r := range rules {
		for _, f := range files {
			if !matchAny(r.OnlyIn, f.Package) && strings.Contains(f.Text, r.Call) {
				out = append(out, CallViolation{Rule: r.Name, File: f.Package + "/" + f.Name, Call: r.Call})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
