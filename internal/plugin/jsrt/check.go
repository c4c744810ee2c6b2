package jsrt

import (
	"reflect"

	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/file"
)

var fileType = reflect.TypeOf(file.File{})

type visitKey struct {
	ptr uintptr
	typ reflect.Type
}

// checkForbidden walks the whole syntax tree and refuses the constructs a
// synchronous, self-contained plugin cannot use. The walk is reflective so
// that no node kind (an async method inside a class, an await inside a
// default parameter) can be missed, and iterative so that it cannot overflow
// the goroutine stack.
func checkForbidden(name string, body *ast.Program) error {
	if len(body.ImportEntries) > 0 {
		return forbiddenAt(name, body, body.ImportEntries[0].Idx0(), "import declarations are not allowed: a plugin is one self-contained module")
	}
	stack := []reflect.Value{reflect.ValueOf(body.Body)}
	seen := make(map[visitKey]bool)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			// Declaration lists share nodes with the body; visiting them
			// twice would make nested functions cost exponential time.
			key := visitKey{v.Pointer(), v.Type()}
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		if msg, node := forbiddenNode(v); msg != "" {
			return forbiddenAt(name, body, node.Idx0(), msg)
		}
		stack = appendChildren(stack, v)
	}
	return nil
}

func appendChildren(stack []reflect.Value, v reflect.Value) []reflect.Value {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			stack = append(stack, v.Elem())
		}
	case reflect.Slice:
		for i := v.Len() - 1; i >= 0; i-- {
			stack = append(stack, v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == fileType {
			return stack
		}
		for i := v.NumField() - 1; i >= 0; i-- {
			stack = append(stack, v.Field(i))
		}
	}
	return stack
}

const msgDynamicImport = "dynamic import() is not allowed: a plugin is one self-contained module"

// dynamicImportAt positions an import() call.
type dynamicImportAt struct{ idx file.Idx }

func (d dynamicImportAt) Idx0() file.Idx { return d.idx }
func (d dynamicImportAt) Idx1() file.Idx { return d.idx }

// forbiddenNode reports a refusal message for a node that plugins may not use.
func forbiddenNode(v reflect.Value) (string, ast.Node) {
	if v.Kind() != reflect.Struct || !v.CanAddr() || !v.Addr().CanInterface() {
		return "", nil
	}
	switch n := v.Addr().Interface().(type) {
	case *ast.CallExpression:
		if _, ok := n.Callee.(*ast.DynamicImportExpression); ok {
			// The parser leaves the import keyword without a position; it sits
			// right before the call's parenthesis.
			return msgDynamicImport, dynamicImportAt{n.LeftParenthesis - file.Idx(len("import"))}
		}
	case *ast.DynamicImportExpression:
		return msgDynamicImport, n
	case *ast.ExportDeclaration:
		if n.FromClause != nil {
			return "re-exporting from another module is not allowed", n
		}
	case *ast.MetaProperty:
		if n.Meta != nil && n.Meta.Name == "import" {
			return "import.meta is not allowed", n
		}
	case *ast.FunctionLiteral:
		if n.Async {
			return "async functions are not allowed: hooks are synchronous", n
		}
	case *ast.ArrowFunctionLiteral:
		if n.Async {
			return "async arrow functions are not allowed: hooks are synchronous", n
		}
	case *ast.AwaitExpression:
		return "await is not allowed: hooks are synchronous", n
	}
	return "", nil
}

func forbiddenAt(name string, body *ast.Program, idx file.Idx, msg string) error {
	ce := &CompileError{Name: name, Message: msg}
	if body.File != nil {
		pos := body.File.Position(int(idx) - body.File.Base())
		ce.Line, ce.Column = pos.Line, pos.Column
	}
	return ce
}
