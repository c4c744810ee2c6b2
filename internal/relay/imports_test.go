package relay

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// codecImportsLeft are the files that still import a concrete codec, and
// what each needs from it. Format knowledge belongs behind protocol.Codec
// (or a small optional interface in protocol); this list may only shrink.
var codecImportsLeft = map[string]string{
	"ep_responses.go":        "the Responses API request decoder, response encoder and usage sniffing",
	"ep_responses_stream.go": "the Responses API stream encoder and event passthrough",
}

// TestRelayDoesNotImportConcreteCodecs keeps format knowledge out of the
// relay: its non-test files reach codecs only through the protocol package.
func TestRelayDoesNotImportConcreteCodecs(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var importing []string
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
			path, _ := strconv.Unquote(imp.Path.Value)
			if !isConcreteCodec(path) {
				continue
			}
			importing = append(importing, name)
			if _, ok := codecImportsLeft[name]; !ok {
				t.Errorf("%s imports %s: put the format knowledge behind protocol.Codec", name, path)
			}
			break
		}
	}
	sort.Strings(importing)
	for name := range codecImportsLeft {
		if i := sort.SearchStrings(importing, name); i == len(importing) || importing[i] != name {
			t.Errorf("%s no longer imports a codec: remove it from codecImportsLeft", name)
		}
	}
}

// isConcreteCodec reports a codec package: a subpackage of protocol other
// than the SSE framing.
func isConcreteCodec(path string) bool {
	const prefix = "github.com/turnpike-gw/turnpike/internal/protocol/"
	return strings.HasPrefix(path, prefix) && path != prefix+"sse"
}
