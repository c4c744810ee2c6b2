package jsrt

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// For every valid JSON text the guard's cheap scan must see exactly the
// nesting a real decoder sees, or a deep text could slip past it.
func FuzzJSONNestingMatchesADecoder(f *testing.F) {
	for _, s := range []string{`{}`, `[[1],{"a":[2]}]`, `"[[["`, `["\"[[[", [1]]`, `{"k":"\\"}`, `[[[[]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := jsonNesting(text) // must not panic on any input
		if !json.Valid([]byte(text)) {
			return
		}
		if want := decoderNesting(t, text); got != want {
			t.Fatalf("jsonNesting(%q) = %d, a decoder sees %d", text, got, want)
		}
	})
}

func decoderNesting(t *testing.T, text string) int {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // only the nesting matters; a number past float64 is still valid JSON
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest
		}
		if err != nil {
			t.Fatalf("decoding a valid text: %v", err)
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}
