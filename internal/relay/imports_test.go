package relay

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRelayDoesNotImportConcreteCodecs keeps format knowledge out of the
// relay: its non-test files reach codecs only through the protocol package's
// interfaces (Codec and the small services in relay.Deps), which app wires.
func TestRelayDoesNotImportConcreteCodecs(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); isConcreteCodec(path) {
				t.Errorf("%s imports %s: put the format knowledge behind an interface in protocol", name, path)
			}
		}
	}
}

// isConcreteCodec reports a codec package: a subpackage of protocol other
// than the SSE framing.
func isConcreteCodec(path string) bool {
	const prefix = "github.com/turnpike-gw/turnpike/internal/protocol/"
	return strings.HasPrefix(path, prefix) && path != prefix+"sse"
}
