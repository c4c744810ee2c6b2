package archtest

import (
	"fmt"
	"go/ast"
	"go/types"
	"sort"
)

// MoneyRule names billing methods that move money and the only packages
// whose production code may call them. The import map cannot say it:
// many packages import billing for its prices and types.
type MoneyRule struct {
	Name string
	// Type is the receiver's type name in internal/billing; Methods the
	// methods of it the rule is about.
	Type    string
	Methods []string
	// CalledOnlyBy lists the only packages that may call them.
	CalledOnlyBy []string
}

// MoneyRules is the money seam of docs/ARCHITECTURE.md: a reservation and
// its end (live calls, tasks, batches) move only through the admission
// seam's ticket; money-in (administrative top-ups and key adjustments) is
// the admin API's, where an operator or a payment provider puts it in (and
// the task test kit's, which funds the accounts of the tests it serves).
var MoneyRules = []MoneyRule{
	{Name: "only admission reserves and ends holds", Type: "Service", Methods: []string{"Reserve", "RestoreHold"},
		CalledOnlyBy: []string{"internal/admission"}},
	{Name: "only admission reserves and ends holds", Type: "Hold",
		Methods:      []string{"Settle", "SettleWith", "Refund", "RefundWith", "Keep", "SettleNow", "RefundNow"},
		CalledOnlyBy: []string{"internal/admission"}},
	{Name: "money comes in through the admin API", Type: "Service", Methods: []string{"TopUp", "TopUpPaid", "AdjustToken"},
		CalledOnlyBy: []string{"internal/admin", "internal/task/tasktest"}},
}

// billingPkg is the package whose methods MoneyRules are about; it may
// call its own.
const billingPkg = Module + "internal/billing"

// MoneyCall is one call of a money-moving method.
type MoneyCall struct {
	From, Method string
}

// MoneyCalls lists the money-moving calls in one type-checked package
// (path relative to Module).
func MoneyCalls(path string, files []*ast.File, info *types.Info) []MoneyCall {
	var out []MoneyCall
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			s := info.Selections[sel]
			if s == nil || s.Kind() != types.MethodVal {
				return true
			}
			if name := receiverName(s.Recv()); name != "" {
				out = append(out, MoneyCall{From: path, Method: name + "." + sel.Sel.Name})
			}
			return true
		})
	}
	return out
}

// receiverName is "Type" for a (pointer to a) named type of billing.
func receiverName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != billingPkg {
		return ""
	}
	return n.Obj().Name()
}

// CheckMoney returns the calls rules forbid, sorted.
func CheckMoney(rules []MoneyRule, calls []MoneyCall) []string {
	var out []string
	for _, c := range calls {
		if c.From == "internal/billing" {
			continue
		}
		for _, r := range rules {
			for _, m := range r.Methods {
				if c.Method == r.Type+"."+m && !matchAny(r.CalledOnlyBy, c.From) {
					out = append(out, fmt.Sprintf("%s: %s calls billing's %s", r.Name, c.From, c.Method))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
