package relay

import (
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// TestTheAsideMomentsOfAPassedThroughEventAllocateNothing: the events of a
// stream that are read aside (its first text, its finish, its usage) cost
// a handoff to another goroutine, not an allocation as well: relaying one
// allocates what the dialect's own reading of it does, nothing more.
func TestTheAsideMomentsOfAPassedThroughEventAllocateNothing(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's sync.Pool drops buffers at random: counts are not a release build's")
	}
	const chunk = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[`
	cases := []struct {
		name, data string
		// firstText: the answer's text was not sent yet.
		firstText bool
		// read is the dialect's reading of the event aside.
		read func(data []byte)
	}{
		{"first text", chunk + `{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`, true,
			func(data []byte) { openai.Chat.AppendStreamText(nil, "", data) }},
		{"finish", chunk + `{"index":0,"delta":{},"finish_reason":"stop"}]}`, false,
			func(data []byte) { openai.Chat.StreamEnds("", data) }},
		{"usage", chunk + `],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`, false,
			func(data []byte) {
				if _, ok := openai.Chat.SniffStreamUsage("", data); ok {
					openai.Chat.UsageOnlyEvent("", data)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSink(&discardWriter{h: http.Header{}}, benchHost{}, false)
			tally := &streamTally{answer: keptAnswer{sp: openai.Chat}}
			step := &passStep{sp: openai.Chat, sink: s, tally: tally, dropUsageOnly: true, ends: openai.Chat}
			data := []byte(tc.data)
			relayOne := func() {
				step.whole, s.textSent = false, !tc.firstText
				if err := step.event("", data); err != nil {
					t.Fatal(err)
				}
				s.flush()
				tally.answer.release()
			}
			relayOne() // the sink's first flush and the pools' first buffers
			dialect := testing.AllocsPerRun(100, func() { tc.read(data) })
			if got := testing.AllocsPerRun(100, relayOne); got != dialect {
				t.Errorf("relaying the %s event allocated %v times, the dialect's reading of it %v", tc.name, got, dialect)
			}
			if tc.name == "finish" && !step.whole {
				t.Error("the finish chunk did not mark the stream whole")
			}
			if tc.name == "usage" && tally.usage.OutputTokens != 2 {
				t.Errorf("usage not tallied: %+v", tally.usage)
			}
		})
	}
}
