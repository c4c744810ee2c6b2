// Package tokenize counts tokens with a real BPE tokenizer (the o200k and
// cl100k encodings, embedded in the binary so counting needs no network).
// The gateway counts to estimate a reservation before a call and to bill a
// call whose upstream reported no usage.
package tokenize

import (
	"io"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go-loader/assets"
	"github.com/turnpike-gw/turnpike/internal/exepages"
)

var perMsgOH = 3 // tokens the chat format adds per message

// The pre-tokenizer patterns of the two encodings, as OpenAI publishes them.
const (
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// encoding is one BPE table, loaded the first time a model needs it: most
// traffic only ever needs o200k, and nothing is parsed until a count is asked.
type encoding struct {
	name    string
	pattern string
	once    sync.Once
	enc     *encoder
}

var (
	o200k  = &encoding{name: "o200k_base", pattern: o200kPattern}
	cl100k = &encoding{name: "cl100k_base", pattern: cl100kPattern}
)

func (e *encoding) get() *encoder {
	e.once.Do(func() {
		e.enc, _ = e.load() // nil: Count falls back to bytes/4
		// The rank file (3.6 MB for o200k) was read from the executable once,
		// to build the table, and is never read again; its pages would stay
		// resident for the process's life. Giving back the executable's
		// read-only pages drops them; the code and tables serving uses fault
		// back in from the page cache.
		_, _ = exepages.Release()
	})
	return e.enc
}

func (e *encoding) load() (*encoder, error) {
	table, err := newRankTable(func() (io.ReadCloser, error) { return assets.Assets.Open(e.name + ".tiktoken") })
	if err != nil {
		return nil, err
	}
	split, err := regexp2.Compile(e.pattern, regexp2.None)
	if err != nil {
		return nil, err
	}
	return &encoder{table: table, split: split}, nil
}

// encodingFor picks the encoding the model family uses; models of other
// vendors get o200k, the closest public approximation.
func encodingFor(model string) *encoder {
	m := strings.ToLower(model)
	if strings.HasPrefix(m, "gpt-4-") || m == "gpt-4" || strings.HasPrefix(m, "gpt-3.5") || strings.HasPrefix(m, "text-embedding") {
		return cl100k.get()
	}
	return o200k.get()
}

// Count returns the number of tokens of text for model. Special-token
// markers in user text are counted as ordinary text, never interpreted.
func Count(model, text string) int {
	if text == "" {
		return 0
	}
	enc := encodingFor(model)
	if enc == nil {
		return (len(text) + 3) / 4
	}
	return enc.count(text)
}

// Messages counts a chat prompt: each message's texts plus the per-message
// framing overhead and the reply primer, as OpenAI documents for chat models.
func Messages(model string, texts [][]string) int {
	n := 3
	for _, parts := range texts {
		n += perMsgOH
		for _, t := range parts {
			n += Count(model, t)
		}
	}
	return n
}
