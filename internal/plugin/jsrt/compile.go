package jsrt

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"
)

// MaxSourceBytes caps the size of one plugin module.
const MaxSourceBytes = 2 << 20

// CompileError reports why a plugin source was refused. Line and Column are
// 1-based and zero when the problem has no single position.
type CompileError struct {
	Name    string
	Line    int
	Column  int
	Message string
}

// Error formats the error as "name:line:column: message".
func (e *CompileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Column, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Name, e.Message)
}

// Program is a compiled, linked plugin module. It is immutable and safe for
// concurrent use: every runtime evaluates its own instance of the module.
type Program struct {
	name    string
	record  *sobek.SourceTextModuleRecord
	exports Exports
}

// Name returns the name the program was compiled under (used in stack traces
// and error messages).
func (p *Program) Name() string { return p.name }

// errImportRefused is returned by the module resolver: plugins are single
// self-contained modules, so nothing can ever be resolved.
var errImportRefused = errors.New("imports are not allowed in task plugins")

func refuseImport(any, string) (sobek.ModuleRecord, error) { return nil, errImportRefused }

// Compile parses, checks and links a plugin module and evaluates it once to
// discover its exports. The source must be a single ES module without imports,
// async functions or await; syntax errors carry their line and column.
func Compile(name, source string) (*Program, error) {
	return compile(name, source, defaultModuleTimeout)
}

// compile is Compile with an explicit bound on the module's top-level run.
func compile(name, source string, evalTimeout time.Duration) (prog *Program, err error) {
	boundRegexpMatches()
	if name == "" {
		name = "plugin.js"
	}
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, &CompileError{Name: name, Message: fmt.Sprintf("internal compiler failure: %v", r)}
		}
	}()
	if err := checkSource(name, source); err != nil {
		return nil, err
	}
	body, err := parseModule(name, source)
	if err != nil {
		return nil, err
	}
	if err := checkForbidden(name, body); err != nil {
		return nil, err
	}
	record, err := sobek.ModuleFromAST(body, refuseImport)
	if err != nil {
		return nil, compilerError(name, err)
	}
	if len(record.RequestedModules()) > 0 {
		return nil, &CompileError{Name: name, Message: errImportRefused.Error()}
	}
	if err := record.Link(); err != nil {
		return nil, compilerError(name, err)
	}
	prog = &Program{name: name, record: record}
	exports, err := prog.inspect(evalTimeout)
	if err != nil {
		return nil, err
	}
	prog.exports = exports
	return prog, nil
}

func checkSource(name, source string) error {
	if len(source) > MaxSourceBytes {
		return &CompileError{Name: name, Message: fmt.Sprintf("source is %d bytes; the limit is %d", len(source), MaxSourceBytes)}
	}
	if !utf8.ValidString(source) {
		return &CompileError{Name: name, Message: "source is not valid UTF-8"}
	}
	if err := checkNesting(source); err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			ce.Name = name
		}
		return err
	}
	return nil
}

// parseModule parses with source maps disabled: a sourceMappingURL comment
// would otherwise make the parser read a file from disk.
func parseModule(name, source string) (*ast.Program, error) {
	body, err := parser.ParseFile(nil, name, source, 0, parser.WithDisableSourceMaps, parser.IsModule)
	if err == nil {
		return body, nil
	}
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		first := list[0]
		return nil, &CompileError{Name: name, Line: first.Position.Line, Column: first.Position.Column,
			Message: "syntax error: " + first.Message}
	}
	return nil, &CompileError{Name: name, Message: "syntax error: " + err.Error()}
}

// compilerError turns sobek's compiler errors (for example a duplicate
// declaration) into positioned CompileErrors.
func compilerError(name string, err error) error {
	var syn *sobek.CompilerSyntaxError
	if errors.As(err, &syn) {
		ce := &CompileError{Name: name, Message: "syntax error: " + syn.Message}
		if syn.File != nil {
			pos := syn.File.Position(syn.Offset)
			ce.Line, ce.Column = pos.Line, pos.Column
		}
		return ce
	}
	var ref *sobek.CompilerReferenceError
	if errors.As(err, &ref) {
		return &CompileError{Name: name, Message: "reference error: " + ref.Message}
	}
	return &CompileError{Name: name, Message: err.Error()}
}
