package protocol_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// benchBody is a chat request of about size bytes: a system prompt, turns
// of text with some non-ASCII and escapes, two tools and stream options.
func benchBody(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"max_tokens":1024,` +
		`"tools":[{"type":"function","function":{"name":"lookup","description":"Find a record","parameters":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}},` +
		`{"type":"function","function":{"name":"save","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}],` +
		`"messages":[{"role":"system","content":"You are a careful assistant.\nAnswer briefly."}`)
	for i := 0; b.Len() < size; i++ {
		b.WriteString(`,{"role":"user","content":"Turn ` + strconv.Itoa(i) + `: what does \"naïve\" mean in this sentence, and why is the café closed on Sundays?"}`)
		b.WriteString(`,{"role":"assistant","content":"It means unaffected; the café closes because the owner rests."}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkBodyCheck compares the one pass that now checks a request body
// (validity and repeated members) with the validity check it replaced.
func BenchmarkBodyCheck(b *testing.B) {
	for _, size := range []int{1 << 10, 32 << 10, 1 << 20} {
		body := benchBody(size)
		name := strconv.Itoa(size>>10) + "KiB"
		b.Run("gjson.ValidBytes/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if !gjson.ValidBytes(body) {
					b.Fatal("invalid")
				}
			}
		})
		b.Run("CheckMembers/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if ok, dup := protocol.CheckMembers(body); !ok || dup != nil {
					b.Fatal("refused", dup)
				}
			}
		})
	}
}
