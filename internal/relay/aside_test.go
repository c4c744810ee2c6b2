package relay

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

func TestAsideRaisesTheSamePanicInTheCaller(t *testing.T) {
	for _, v := range []any{"boom", http.ErrAbortHandler, errors.New("broken"), 42} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			defer func() {
				if got := recover(); got != v {
					t.Errorf("the caller recovered %v, want %v", got, v)
				}
			}()
			aside(func() { panic(v) })
			t.Error("aside returned after its function panicked")
		})
	}
}

func TestAsideRunsOnAnotherGoroutineAndWaitsForIt(t *testing.T) {
	var stack string
	done := false
	aside(func() {
		buf := make([]byte, 4<<10)
		stack = string(buf[:runtime.Stack(buf, false)])
		done = true
	})
	if !done {
		t.Fatal("aside returned before its function ran")
	}
	if strings.Contains(stack, "testing.tRunner") || !strings.Contains(stack, "asideCall).run") {
		t.Errorf("the function ran on the caller's stack:\n%s", stack)
	}
}

func TestAsideServesManyCallsAtOnce(t *testing.T) {
	const n = 3 * maxAsideWorkers // past the kept goroutines
	var wg sync.WaitGroup
	release := make(chan struct{})
	var ran atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			aside(func() {
				ran.Add(1)
				<-release // every call waits until all are under way
			})
		}()
	}
	for ran.Load() < n {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if got := asideWorkers.Load(); got > maxAsideWorkers {
		t.Errorf("%d goroutines kept, past the %d allowed", got, maxAsideWorkers)
	}
	for i := range 10 {
		got := 0
		aside(func() { got = i })
		if got != i {
			t.Fatalf("a kept goroutine ran call %d as %d", i, got)
		}
	}
}

func TestNamesNonNullFindsAMemberWithAValue(t *testing.T) {
	cases := []struct {
		data string
		name []byte
		want bool
	}{
		{`{"choices":[{"delta":{"content":"hi"}}]}`, usageName, false},
		{`{"choices":[],"usage":null}`, usageName, false},
		{`{"choices":[],"usage":{"prompt_tokens":3}}`, usageName, true},
		{`{"usage":null,"x":{"usage":{"output_tokens":2}}}`, usageName, true},
		{`{"usageMetadata":{"promptTokenCount":1}}`, usageName, true},
		{`{"usage": null}`, usageName, true}, // spaced: read by the dialect, which finds none
		{`{"choices":[{"finish_reason":null}]}`, finishName, false},
		{`{"choices":[{"finish_reason":"stop"}]}`, finishName, true},
		{`[DONE]`, finishName, false},
		{``, usageName, false},
	}
	for _, tc := range cases {
		if got := namesNonNull([]byte(tc.data), tc.name); got != tc.want {
			t.Errorf("namesNonNull(%s, %s) = %v, want %v", tc.data, tc.name, got, tc.want)
		}
	}
}

// nopStep relays nothing: the recorder is what is under test.
type nopStep struct{ ended bool }

func (*nopStep) event(string, []byte) error { return nil }
func (s *nopStep) end() error               { s.ended = true; return nil }

// recordedStream is a chat stream of n content chunks, a finish, usage and
// the end marker, as an upstream sends it.
func recordedStream(n int) []string {
	var evs []string
	evs = append(evs, `{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
	for i := range n {
		evs = append(evs, fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"w%d "}}]}`, i))
	}
	return append(evs,
		`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}`,
		`[DONE]`)
}

func TestRecordStepRecordsWhatDecodingEachEventAtOnceRecords(t *testing.T) {
	cases := []struct {
		name   string
		chunks int
		limit  int
		ended  bool
	}{
		{"short answer, decoded at the end", 5, 1 << 20, true},
		{"long answer, decoded in batches", 400, 1 << 20, true},
		{"past the cache's bound", 400, 100, true},
		{"broken after its last event (end never ran)", 400, 1 << 20, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := recordedStream(tc.chunks)
			want := &answerRecorder{limit: tc.limit}
			dec := openai.Chat.NewStreamDecoder()
			for _, ev := range evs {
				if err := dec.Decode("", []byte(ev), want.add); err != nil {
					want.over = true
				}
			}
			if tc.ended {
				if err := dec.Finish(want.add); err != nil {
					want.over = true
				}
			}

			got := &answerRecorder{limit: tc.limit}
			inner := &nopStep{}
			s := &recordStep{eventStep: inner, dec: openai.Chat.NewStreamDecoder(), rec: got}
			buf := make([]byte, 0, 512)
			for _, ev := range evs {
				buf = append(buf[:0], ev...)
				if err := s.event("", buf); err != nil {
					t.Fatal(err)
				}
				for i := range buf {
					buf[i] = 'x' // the pump's reader reuses its buffer
				}
				if len(s.recordBufs.held) >= recordBatch {
					t.Fatalf("%d event bytes held undecoded, past the batch of %d", len(s.held), recordBatch)
				}
			}
			if tc.ended {
				if err := s.end(); err != nil || !inner.ended {
					t.Fatalf("end: %v, relaying step ended: %v", err, inner.ended)
				}
			}
			if w, g := want.response(), got.response(); !reflect.DeepEqual(w, g) {
				t.Errorf("recorded\n%+v\nwant\n%+v", g, w)
			}
			if s.recordBufs != nil || got.step != nil {
				t.Error("the event buffers were not given back once the answer was recorded")
			}
			if tc.limit >= 1<<20 && tc.ended && got.response() == nil {
				t.Error("a whole answer within the bound was not recorded")
			}
		})
	}
}

func BenchmarkAside(b *testing.B) {
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		aside(func() { n++ })
	}
	if n != b.N {
		b.Fatal(n)
	}
}
