package relay

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// flushLog is a client that records what each flush sent; what was written
// after the last flush is left in pending (net/http sends it when the
// handler returns).
type flushLog struct {
	h       http.Header
	pending bytes.Buffer
	flushes []string
}

func (f *flushLog) Header() http.Header { return f.h }
func (f *flushLog) WriteHeader(int)     {}
func (f *flushLog) Write(p []byte) (int, error) {
	return f.pending.Write(p)
}
func (f *flushLog) Flush() {
	f.flushes = append(f.flushes, f.pending.String())
	f.pending.Reset()
}

// openAIChunks is an OpenAI stream: a role chunk, the deltas, the finish
// chunk, the usage chunk and [DONE].
func openAIChunks(deltas ...string) string {
	var b strings.Builder
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n")
	for _, d := range deltas {
		b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + d + "\"},\"finish_reason\":null}]}\n\n")
	}
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	b.WriteString("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func TestTheFirstTextOfAReadIsFlushedBeforeTheRestOfTheRead(t *testing.T) {
	tests := []struct {
		name string
		step func(*sink, *streamTally) eventStep
	}{
		{"passed through", func(s *sink, tally *streamTally) eventStep {
			return &passStep{sp: openai.Chat, sink: s, tally: tally, ends: openai.Chat}
		}},
		{"converted", func(s *sink, tally *streamTally) eventStep {
			c := newConvertStep(openai.Chat.NewStreamDecoder(), anthropic.Messages.NewStreamEncoder(s, protocol.StreamOptions{}), "m", 3, tally)
			c.out = s
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &flushLog{h: http.Header{}}
			s := newSink(w, benchHost{}, false)
			tally := &streamTally{answer: keptAnswer{sp: openai.Chat}}
			// One read brings the whole stream, as a fast upstream's does.
			if err := pump(strings.NewReader(openAIChunks("Hel", "lo")), s, tt.step(s, tally)); err != nil {
				t.Fatal(err)
			}
			if len(w.flushes) < 2 {
				t.Fatalf("flushes = %q; want the first text apart from the rest", w.flushes)
			}
			if first := w.flushes[0]; !strings.Contains(first, "Hel") || strings.Contains(first, "lo\"") {
				t.Errorf("first flush = %q; want everything up to the first text and nothing after it", first)
			}
			if all := strings.Join(w.flushes, "") + w.pending.String(); !strings.Contains(all, "lo\"") {
				t.Errorf("the answer lost its second delta: %q", all)
			}
		})
	}
}

func TestAStreamEndingWithItsLastReadLeavesTheTailToTheServer(t *testing.T) {
	w := &flushLog{h: http.Header{}}
	s := newSink(w, benchHost{}, false)
	tally := &streamTally{answer: keptAnswer{sp: openai.Chat}}
	step := &passStep{sp: openai.Chat, sink: s, tally: tally, ends: openai.Chat}
	// The last read returns the end of the stream with its last bytes, as
	// when the upstream's chunked terminator came with [DONE].
	body := iotest.DataErrReader(strings.NewReader(openAIChunks("Hel", "lo")))
	if err := pump(body, s, step); err != nil {
		t.Fatal(err)
	}
	s.end()
	if !strings.Contains(w.pending.String(), "[DONE]") {
		t.Errorf("pending = %q; want [DONE] left for the server's last write", w.pending.String())
	}
	for _, f := range w.flushes {
		if strings.Contains(f, "[DONE]") {
			t.Errorf("[DONE] went out in a flush of its own: %q", w.flushes)
		}
	}
}

func TestClosingAStreamFlushesItsTail(t *testing.T) {
	w := &flushLog{h: http.Header{}}
	s := newSink(w, benchHost{}, true)
	if err := s.Event("", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	s.close()
	if w.pending.Len() != 0 || len(w.flushes) != 1 || w.flushes[0] != `[{"a":1}]` {
		t.Errorf("flushes = %q, pending %q; want the whole array in one flush", w.flushes, w.pending.String())
	}
}

// writeCounter counts the ResponseWriter's Write calls.
type writeCounter struct {
	flushLog
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.flushLog.Write(p)
}

func TestTheEventsOfOneReadReachTheWriterInOneWrite(t *testing.T) {
	tests := []struct {
		name       string
		events     int
		size       int
		wantWrites int
	}{
		{"small events are held to the flush", 10, 100, 1},
		{"events past the held bound are written on", 3, maxHeld, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &writeCounter{flushLog: flushLog{h: http.Header{}}}
			s := newSink(w, benchHost{}, false)
			data := bytes.Repeat([]byte("x"), tt.size)
			for range tt.events {
				if err := s.Event("", data); err != nil {
					t.Fatal(err)
				}
			}
			s.flush()
			if w.writes != tt.wantWrites {
				t.Errorf("writes = %d; want %d", w.writes, tt.wantWrites)
			}
			if got, want := len(w.flushes[0]), tt.events*(len("data: \n\n")+tt.size); got != want {
				t.Errorf("flushed %d bytes; want %d", got, want)
			}
		})
	}
}
