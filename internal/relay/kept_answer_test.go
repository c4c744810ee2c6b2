package relay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// countingText is openai.Chat's passthrough that counts how many events it
// was asked to read text from.
type countingText struct {
	openai.ChatCodec
	parsed *int
}

func (c countingText) AppendStreamText(dst []byte, name string, data []byte) []byte {
	*c.parsed++
	return c.ChatCodec.AppendStreamText(dst, name, data)
}

func chatChunk(text string) []byte {
	return fmt.Appendf(nil, `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, text)
}

func TestKeptAnswerBoundsWhatAnOpenStreamHolds(t *testing.T) {
	tests := []struct {
		name   string
		events int
		// parsedBeforeEnd is whether any event is parsed while the stream
		// is still open (only an answer past maxKeptRaw is).
		parsedBeforeEnd bool
	}{
		{"a short answer is kept raw and never parsed while open", 20, false},
		{"an answer just under the bound is still never parsed", maxKeptRaw/len(chatChunk("tok999 ")) - 1, false},
		{"a long answer keeps its earlier text extracted and at most the bound raw", 5000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsed := 0
			a := keptAnswer{sp: countingText{ChatCodec: openai.Chat, parsed: &parsed}}
			defer a.release()
			var want strings.Builder
			for i := range tt.events {
				piece := fmt.Sprintf("tok%d ", i)
				want.WriteString(piece)
				a.keepEvent("", chatChunk(piece))
				if len(a.raw) > maxKeptRaw {
					t.Fatalf("after %d events %d raw bytes are kept, more than %d", i+1, len(a.raw), maxKeptRaw)
				}
			}
			if got := parsed > 0; got != tt.parsedBeforeEnd {
				t.Errorf("%d events parsed while the stream was open, want parsing %v", parsed, tt.parsedBeforeEnd)
			}
			if !a.kept() {
				t.Fatal("kept() = false for an answer with text")
			}
			if got := a.String(); got != want.String() {
				t.Errorf("String() = %.80q… (%d bytes), want %.80q… (%d bytes), in order", got, len(got), want.String(), want.Len())
			}
		})
	}
}

func TestKeptAnswerPutsExtractedTextBeforeTheRawEvents(t *testing.T) {
	a := keptAnswer{sp: openai.Chat}
	defer a.release()
	a.addText("first ")
	a.keepEvent("", chatChunk("second"))
	if got := a.String(); got != "first second" {
		t.Errorf("String() = %q, want %q", got, "first second")
	}
}

func TestKeptAnswerWithNothingKeptIsNotCounted(t *testing.T) {
	a := keptAnswer{sp: openai.Chat}
	if a.kept() {
		t.Error("kept() = true for an answer that kept nothing")
	}
	a.release()
}

func TestKeptAnswerBuffersAreReusedAfterRelease(t *testing.T) {
	a := keptAnswer{sp: openai.Chat}
	a.keepEvent("", chatChunk("x"))
	bufs := a.bufs
	a.release()
	if a.bufs != nil || a.raw != nil || a.ends != nil {
		t.Fatal("release left the buffers on the answer")
	}
	if bufs.raw == nil || len(bufs.raw) != 0 || len(bufs.ends) != 0 {
		t.Errorf("released buffers were not emptied: %d raw bytes, %d ends", len(bufs.raw), len(bufs.ends))
	}
}
