package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/plugin/jsrt"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// MaxSourceBytes caps one uploaded plugin module. It equals the runtime's
// own limit so an upload is refused before the compiler sees it.
const MaxSourceBytes = jsrt.MaxSourceBytes

// compiled is a validated plugin version: the program, its manifest and the
// source it came from. Pools are made from it by the registry.
type compiled struct {
	prog     *jsrt.Program
	manifest *manifest.Manifest
	source   string
	sha256   string
	// functions are the exported function paths, for dry runs.
	functions []string
}

// SourceSHA256 is the lowercase hex SHA-256 of a plugin source, the identity
// the registry compares re-uploads and marketplace files by.
func SourceSHA256(source string) string {
	sum := sha256.Sum256([]byte(source))
	return hex.EncodeToString(sum[:])
}

// prepare compiles and validates a source the same way for uploads, the
// database loader, marketplace installs and the offline check. A refused
// source yields its problems; compile failures become one problem located at
// the source line.
func prepare(name, source string) (*compiled, manifest.Problems) {
	switch {
	case strings.TrimSpace(source) == "":
		return nil, manifest.Problems{{Path: "source", Message: "is empty"}}
	case len(source) > MaxSourceBytes:
		return nil, manifest.Problems{{Path: "source", Message: fmt.Sprintf("is %d bytes; the limit is %d", len(source), MaxSourceBytes)}}
	}
	prog, err := jsrt.Compile(name, source)
	if err != nil {
		return nil, manifest.Problems{compileProblem(err)}
	}
	ex := prog.Exports()
	m, problems := manifest.Validate(manifest.Exports{Meta: ex.Meta, Functions: ex.Functions, Names: ex.ExportNames})
	if len(problems) > 0 {
		return nil, problems
	}
	return &compiled{prog: prog, manifest: m, source: source, sha256: SourceSHA256(source), functions: ex.Functions}, nil
}

func compileProblem(err error) manifest.Problem {
	var ce *jsrt.CompileError
	if errors.As(err, &ce) {
		path := "source"
		if ce.Line > 0 {
			path = fmt.Sprintf("source:%d:%d", ce.Line, ce.Column)
		}
		return manifest.Problem{Path: path, Message: ce.Message}
	}
	return manifest.Problem{Path: "source", Message: err.Error()}
}
