package relay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// guardPacedUpstream streams an OpenAI answer of n five-character words, one
// chunk every gap, after its role chunk.
func guardPacedUpstream(t testing.TB, n int, gap time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		send := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s); fl.Flush() }
		send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
		for range n {
			time.Sleep(gap)
			send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word "}}]}`)
		}
		send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`)
		send("[DONE]")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// firstBytes times one streamed call: until the first event, and until
// the first event carrying answer text.
func firstBytes(t testing.TB, e *env) (first, firstText time.Duration) {
	start := time.Now()
	d := dialects[0]
	resp := e.request(d.path(true), d.header, d.body("hi", true))
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: {") {
			continue
		}
		if first == 0 {
			first = time.Since(start)
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		_ = json.Unmarshal([]byte(line[6:]), &chunk)
		if firstText == 0 && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			firstText = time.Since(start)
		}
	}
	return first, firstText
}

// TestGuardrailWindowHoldsTheFirstTextForOneWindow measures what a
// response guardrail adds to a stream's first byte: the first event (the
// role chunk) leaves as before; the first text waits until the upstream
// produced one window of characters (window_chars / 5 chunks here).
func TestGuardrailWindowHoldsTheFirstTextForOneWindow(t *testing.T) {
	const gap = 5 * time.Millisecond
	run := func(window int) (time.Duration, time.Duration) {
		e := newEnv(t)
		e.channel("a", guardPacedUpstream(t, 40, gap).URL, nil)
		if window > 0 {
			e.guardrails(guardrail.Spec{Type: guardrail.TypePII, Stages: []string{"response"},
				Config: json.RawMessage(fmt.Sprintf(`{"action":"redact","window_chars":%d}`, window))})
		}
		// The shortest of three runs: the shared machine adds noise, never
		// takes it away.
		first, text := firstBytes(t, e)
		for range 2 {
			f, x := firstBytes(t, e)
			first, text = min(first, f), min(text, x)
		}
		return first, text
	}
	offFirst, offText := run(0)
	onFirst, onText := run(100)
	t.Logf("no guardrail: first event %s, first text %s; window 100: first event %s, first text %s", offFirst, offText, onFirst, onText)
	// 100 characters are 20 chunks of "word ": the text waits for them,
	// the first event does not.
	if onText < 15*gap {
		t.Errorf("the first text left before the window filled: %s", onText)
	}
	if onFirst > onText/2 {
		t.Errorf("the first event waited for the window: %s (first text %s)", onFirst, onText)
	}
}
