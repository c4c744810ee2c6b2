package openai

import "bytes"

// The stream pump asks every chunk whether it carries usage or a finish
// reason, and most carry neither: these byte searches keep them from being
// parsed. They look for a member name without its opening quote, then
// check the quote: bytes.Index steps through every occurrence of a
// pattern's first byte, and a quote is the commonest byte of JSON (a
// third of the pump's time went to searching for `"usage"` that way).

var (
	usageBare        = []byte(`usage"`)
	finishReasonBare = []byte(`finish_reason"`)
	nullValue        = []byte(`:null`)
)

// hasName reports whether data contains bare preceded by a quote, that is
// the quoted name bare spells without its opening quote.
func hasName(data, bare []byte) bool {
	found, _ := scanName(data, bare)
	return found
}

// scanName reports whether data contains the quoted name bare spells
// without its opening quote, and whether any occurrence of it is followed
// directly by :null.
func scanName(data, bare []byte) (found, null bool) {
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], bare)
		if i < 0 {
			return found, false
		}
		at := off + i
		off = at + len(bare)
		if at == 0 || data[at-1] != '"' {
			continue
		}
		found = true
		if bytes.HasPrefix(data[off:], nullValue) {
			return true, true
		}
	}
	return found, false
}
