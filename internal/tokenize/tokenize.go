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

var (
	once     sync.Once
	o200k    *tiktoken.Tiktoken
	cl100k   *tiktoken.Tiktoken
	loadErr  error
	perMsgOH = 3 // tokens the chat format adds per message
)

func load() {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	o200k, loadErr = tiktoken.GetEncoding("o200k_base")
	if loadErr != nil {
		return
	}
	cl100k, loadErr = tiktoken.GetEncoding("cl100k_base")
}

// encodingFor picks the encoding the model family uses; models of other
// vendors get o200k, the closest public approximation.
func encodingFor(model string) *tiktoken.Tiktoken {
	once.Do(load)
	if loadErr != nil {
		return nil
	}
	m := strings.ToLower(model)
	if strings.HasPrefix(m, "gpt-4-") || m == "gpt-4" || strings.HasPrefix(m, "gpt-3.5") || strings.HasPrefix(m, "text-embedding") {
		return cl100k
	}
	return o200k
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
