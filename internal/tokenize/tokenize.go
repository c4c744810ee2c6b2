// Package tokenize counts tokens with a real BPE tokenizer (the o200k and
// cl100k encodings, embedded in the binary so counting needs no network).
// The gateway counts to estimate a reservation before a call and to bill a
// call whose upstream reported no usage.
package tokenize

import (
	"strings"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

var perMsgOH = 3 // tokens the chat format adds per message

// encoding is one BPE table, loaded the first time a model needs it: most
// traffic only ever needs o200k, and each table costs megabytes of heap.
type encoding struct {
	name string
	once sync.Once
	enc  *tiktoken.Tiktoken
}

var (
	loaderOnce sync.Once
	o200k      = &encoding{name: "o200k_base"}
	cl100k     = &encoding{name: "cl100k_base"}
)

func (e *encoding) get() *tiktoken.Tiktoken {
	e.once.Do(func() {
		loaderOnce.Do(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })
		e.enc, _ = tiktoken.GetEncoding(e.name) // nil: Count falls back to bytes/4
	})
	return e.enc
}

// encodingFor picks the encoding the model family uses; models of other
// vendors get o200k, the closest public approximation.
func encodingFor(model string) *tiktoken.Tiktoken {
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
	return len(enc.EncodeOrdinary(text))
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
