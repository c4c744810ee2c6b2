package relay

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

// fakeOpenAI is an OpenAI-compatible upstream that records what it receives.
type fakeOpenAI struct {
	mu       sync.Mutex
	bodies   []map[string]any
	auth     []string
	status   int    // non-zero: answer this status with an error body
	text     string // answer text
	usage    string // usage JSON; empty omits usage
	breakOff bool   // stream: stop after the first content chunk without [DONE]
	// seen, when set, records each request's path, headers and body.
	seen *recorder
}

func newFake(t *testing.T, f *fakeOpenAI) *httptest.Server {
	if f.text == "" {
		f.text = "Hello there"
	}
	if f.usage == "" {
		f.usage = `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		status := f.status
		f.mu.Unlock()
		if f.seen != nil {
			f.seen.keepRaw(r, raw)
		}
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, 404)
			return
		}
		if status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"upstream says %d","type":"server_error","code":null}}`, status)
			return
		}
		if body["stream"] == true {
			f.stream(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":%s}`,
			body["model"], f.text, f.usage)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeOpenAI) stream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s); fl.Flush() }
	f.mu.Lock()
	breakOff := f.breakOff // a test may mend the upstream between calls
	f.mu.Unlock()
	send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
	for i, word := range strings.SplitAfter(f.text, " ") {
		send(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, word))
		if breakOff && i == 0 {
			panic(http.ErrAbortHandler)
		}
	}
	send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":` + f.usage + `}`)
	send("[DONE]")
}

func (f *fakeOpenAI) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeOpenAI) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[len(f.bodies)-1]
}
