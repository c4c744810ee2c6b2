package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// Size budgets (docs/ARCHITECTURE.md, DESIGN.md habit 11): a production
// file past MaxFileLines usually holds two things that change apart, and a
// function past MaxFuncLines does several things in a row.
const (
	MaxFileLines = 400
	MaxFuncLines = 60
)

// Oversize is a production file or function past its budget.
type Oversize struct {
	Where string // file, or file:function
	Lines int
}

func (o Oversize) String() string { return fmt.Sprintf("%s: %d lines", o.Where, o.Lines) }

// Measure returns the files of src (name → text) past MaxFileLines and the
// functions past MaxFuncLines, largest first. A function's lines run from
// its func keyword (doc comment excluded) to its closing brace.
func Measure(src []SourceFile) (files, funcs []Oversize, err error) {
	fset := token.NewFileSet()
	for _, f := range src {
		name := f.Package + "/" + f.Name
		if n := strings.Count(f.Text, "\n"); n > MaxFileLines {
			files = append(files, Oversize{name, n})
		}
		file, perr := parser.ParseFile(fset, name, f.Text, parser.SkipObjectResolution)
		if perr != nil {
			return nil, nil, perr
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > MaxFuncLines {
				funcs = append(funcs, Oversize{name + ":" + funcName(fn), n})
			}
		}
	}
	bySize := func(s []Oversize) {
		sort.Slice(s, func(i, j int) bool {
			return s[i].Lines > s[j].Lines || s[i].Lines == s[j].Lines && s[i].Where < s[j].Where
		})
	}
	bySize(files)
	bySize(funcs)
	return files, funcs, nil
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
