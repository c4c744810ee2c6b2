package guardrail

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// prompt4K is a 4 KB prompt of prose, code and numbers, the size the
// contract's budget (50 µs for the built-in guardrails) is stated for.
func prompt4K(withData bool) string {
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString("Please review this function and explain the output for order 1234567 on 2024-06-01 12:30:45. ")
		b.WriteString("func sum(xs []int) int { t := 0; for _, x := range xs { t += x }; return t } // v1.2.3 ")
		b.WriteString("The build da39a3ee5e6b4b0d3255bfef95601890afd80709 ran at 1717245296789 for user-42.\n")
	}
	s := b.String()[:4096]
	if withData {
		s = s[:1000] + " mail bob@example.org card 4111111111111111 " + s[1050:]
	}
	return s
}

func benchCheck(b *testing.B, withData bool, action string) {
	s := newSet(b, nil,
		Spec{Type: TypePII, Config: json.RawMessage(`{"action":"` + action + `"}`)},
		Spec{Type: TypeSecrets, Config: json.RawMessage(`{"action":"` + action + `"}`)})
	prompt := prompt4K(withData)
	ctx := context.Background()
	b.SetBytes(int64(len(prompt)))
	b.ReportAllocs()
	for b.Loop() {
		text := prompt
		s.Check(ctx, Input{Stage: StageRequest, Texts: []*string{&text}})
	}
}

func BenchmarkBuiltins4KBClean(b *testing.B)    { benchCheck(b, false, ActionBlock) }
func BenchmarkBuiltins4KBRedacted(b *testing.B) { benchCheck(b, true, ActionRedact) }

// BenchmarkWindowPerChunk is the cost a streamed answer pays per chunk of
// a few characters with the pii and secrets guardrails on.
func BenchmarkWindowPerChunk(b *testing.B) {
	s := newSet(b, nil, Spec{Type: TypePII, Config: json.RawMessage(`{"action":"redact"}`)}, Spec{Type: TypeSecrets})
	chunks := chunked(prompt4K(false), 6)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		w := s.NewWindow(Call{})
		for _, c := range chunks {
			w.Write(ctx, c)
		}
		w.Flush(ctx)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunks)), "ns/chunk")
}
