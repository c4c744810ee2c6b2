package relay

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// benchEvents is the length of the benchmark streams, a typical answer.
const benchEvents = 200

// benchOpenAIStream is an OpenAI chunk stream of benchEvents deltas, then
// the finish chunk, the usage chunk and [DONE].
func benchOpenAIStream() []byte { return benchOpenAIStreamOf(benchEvents) }

// benchOpenAIStreamOf is benchOpenAIStream with n deltas.
func benchOpenAIStreamOf(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	b.WriteString("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":200,\"total_tokens\":210}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// discardWriter is a client that takes every byte and flush at no cost.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

type benchHost struct{}

func (benchHost) answerStarted() {}

func runPumpBench(b *testing.B, stream []byte, step func(*sink, *streamTally) eventStep) {
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	w := &discardWriter{h: http.Header{}}
	for i := 0; i < b.N; i++ {
		s := newSink(w, benchHost{}, false)
		tally := &streamTally{answer: keptAnswer{sp: openai.Chat}}
		if err := pump(bytes.NewReader(stream), s, step(s, tally)); err != nil {
			b.Fatal(err)
		}
		// As relayEvents does once the stream is settled.
		tally.answer.release()
	}
}

// BenchmarkPumpSameFormat relays an OpenAI stream to an OpenAI client.
func BenchmarkPumpSameFormat(b *testing.B) {
	runPumpBench(b, benchOpenAIStream(), func(s *sink, t *streamTally) eventStep {
		return &passStep{sp: openai.Chat, sink: s, tally: t, dropUsageOnly: true}
	})
}

// BenchmarkPumpLongAnswer relays a 2,000-chunk OpenAI stream to an OpenAI
// client: past maxKeptRaw the kept events' text is extracted as it goes.
func BenchmarkPumpLongAnswer(b *testing.B) {
	runPumpBench(b, benchOpenAIStreamOf(10*benchEvents), func(s *sink, t *streamTally) eventStep {
		return &passStep{sp: openai.Chat, sink: s, tally: t, dropUsageOnly: true}
	})
}

// BenchmarkPumpConverted relays an OpenAI stream to a messages-native
// client.
func BenchmarkPumpConverted(b *testing.B) {
	runPumpBench(b, benchOpenAIStream(), func(s *sink, t *streamTally) eventStep {
		enc := anthropic.Messages.NewStreamEncoder(s, protocol.StreamOptions{})
		return newConvertStep(openai.Chat.NewStreamDecoder(), enc, "m", 10, t)
	})
}

// TestAPassedThroughEventAllocatesNothing relays streams of 20 and 200
// deltas: what a stream allocates (its sink, its tally, the aside calls of
// its first text, finish and usage) must not grow with its events.
func TestAPassedThroughEventAllocatesNothing(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's sync.Pool drops buffers at random: counts are not a release build's")
	}
	w := &discardWriter{h: http.Header{}}
	relayOf := func(n int) float64 {
		stream := benchOpenAIStreamOf(n)
		return testing.AllocsPerRun(50, func() {
			s := newSink(w, benchHost{}, false)
			tally := &streamTally{answer: keptAnswer{sp: openai.Chat}}
			step := &passStep{sp: openai.Chat, sink: s, tally: tally, dropUsageOnly: true, ends: openai.Chat}
			if err := pump(bytes.NewReader(stream), s, step); err != nil {
				t.Fatal(err)
			}
			tally.answer.release()
		})
	}
	short, long := relayOf(20), relayOf(200)
	if long-short >= 1 {
		t.Errorf("a stream of 200 deltas allocated %v times, one of 20 %v: %.2f allocations an event",
			long, short, (long-short)/180)
	}
}
