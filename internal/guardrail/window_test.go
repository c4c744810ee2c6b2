package guardrail

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// stream feeds chunks through a window and returns what the client got and
// the block, if any.
func stream(w *Window, chunks []string) (string, *Block) {
	var out strings.Builder
	ctx := context.Background()
	for _, c := range chunks {
		rel, b := w.Write(ctx, c)
		if b != nil {
			return out.String(), b
		}
		out.WriteString(rel)
	}
	rel, b := w.Flush(ctx)
	out.WriteString(rel)
	return out.String(), b
}

func chunked(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func TestWindowCatchesACardSplitAcrossChunks(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 30)
	answer := filler + "the card is 4111 1111 1111 1111 thanks " + filler
	for _, size := range []int{1, 3, 7, 64} {
		redact := newSet(t, nil, Spec{Type: TypePII, Config: json.RawMessage(`{"action":"redact","window_chars":64}`)}).NewWindow(Call{})
		got, b := stream(redact, chunked(answer, size))
		if b != nil || strings.Contains(got, "4111") || !strings.Contains(got, "the card is [REDACTED:card] thanks") {
			t.Fatalf("chunks of %d: redacted stream %q (block %v)", size, got, b)
		}
		if want := strings.Replace(answer, "4111 1111 1111 1111", "[REDACTED:card]", 1); got != want {
			t.Fatalf("chunks of %d: stream changed beyond the card", size)
		}
		block := newSet(t, nil, Spec{Type: TypePII}).NewWindow(Call{})
		got, b = stream(block, chunked(answer, size))
		if b == nil || strings.Contains(got, "4111") || strings.Contains(got, "the card") {
			t.Fatalf("chunks of %d: blocked stream released %q (block %v)", size, got, b)
		}
		if r := block.Records(); len(r) != 1 || r[0].Matches[KindCard] != 1 {
			t.Fatalf("records %+v", r)
		}
	}
}

func TestWindowHoldsOnlyTheWindow(t *testing.T) {
	w := newSet(t, nil, Spec{Type: TypePII, Config: json.RawMessage(`{"window_chars":16}`)}).NewWindow(Call{})
	rel, _ := w.Write(context.Background(), strings.Repeat("word ", 20))
	if len(rel) < 100-16-64 || len(w.held) < 16 {
		t.Fatalf("released %d bytes, held %d", len(rel), len(w.held))
	}
}

func TestWindowMonitorReleasesEverything(t *testing.T) {
	w := newSet(t, nil, Spec{Type: TypeSecrets, Mode: ModeMonitor}).NewWindow(Call{})
	answer := strings.Repeat("x ", 200) + "AKIAIOSFODNN7EXAMPLE " + strings.Repeat("y ", 200)
	ctx := context.Background()
	for _, c := range chunked(answer, 5) {
		// Monitoring holds nothing back: each chunk leaves as it came.
		if rel, b := w.Write(ctx, c); rel != c || b != nil {
			t.Fatalf("chunk %q released as %q (block %v)", c, rel, b)
		}
	}
	if rel, b := w.Flush(ctx); rel != "" || b != nil {
		t.Fatalf("flush released %q (block %v)", rel, b)
	}
	if r := w.Records(); len(r) != 1 || r[0].Action != ActionMonitor || r[0].Matches[KindAWSKey] != 1 {
		t.Fatalf("records %+v", r)
	}
}

func TestNoWindowWithoutResponseGuardrails(t *testing.T) {
	s := newSet(t, nil, Spec{Type: TypePII, Stages: []string{StageRequest}})
	if s.NewWindow(Call{}) != nil {
		t.Fatal("a request-only guardrail needs no window")
	}
}
