package relay

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// pacedPieces is how many text deltas a paced upstream sends, one at a time.
const pacedPieces = 3

// pacedEvent is one upstream SSE event: name (may be empty) and data.
type pacedEvent struct{ name, data string }

// pacedScript is what an upstream format sends: events before the first
// delta, the delta carrying a piece of text, and the events that end it.
type pacedScript struct {
	pre   []pacedEvent
	delta func(text string) pacedEvent
	end   []pacedEvent
}

var pacedScripts = map[string]pacedScript{
	"openai": {
		delta: func(s string) pacedEvent {
			return pacedEvent{"", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` + s + `"}}]}`}
		},
		end: []pacedEvent{
			{"", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`},
			{"", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`},
			{"", `[DONE]`},
		},
	},
	"anthropic": {
		pre: []pacedEvent{
			{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":1}}}`},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		},
		delta: func(s string) pacedEvent {
			return pacedEvent{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + s + `"}}`}
		},
		end: []pacedEvent{
			{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":500}}`},
			{"message_stop", `{"type":"message_stop"}`},
		},
	},
	"gemini": {
		delta: func(s string) pacedEvent {
			return pacedEvent{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":"` + s + `"}]},"index":0}],"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":1,"totalTokenCount":1001},"modelVersion":"m"}`}
		},
		end: []pacedEvent{
			{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":500,"totalTokenCount":1500},"modelVersion":"m"}`},
		},
	},
	"responses": {
		pre: []pacedEvent{
			{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"m","output":[]}}`},
		},
		delta: func(s string) pacedEvent {
			return pacedEvent{"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"` + s + `"}`}
		},
		end: []pacedEvent{
			{"response.completed", `{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","model":"m","output":[],"usage":{"input_tokens":1000,"output_tokens":500,"total_tokens":1500}}}`},
		},
	},
}

// pacedUpstream serves one stream of format in eol framing. After each
// piece it waits on next until the test's client has received that piece:
// an upstream that never sends more until the client has what it sent, so
// a relay that holds an event back can only deadlock (and fail on the
// guard timeout), whatever the machine's speed.
func pacedUpstream(t *testing.T, format, eol string, next <-chan struct{}) *httptest.Server {
	sc := pacedScripts[format]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		write := func(evs ...pacedEvent) {
			var b strings.Builder
			for _, ev := range evs {
				if ev.name != "" {
					b.WriteString("event: " + ev.name + eol)
				}
				b.WriteString("data: " + ev.data + eol + eol)
			}
			_, _ = io.WriteString(w, b.String())
			w.(http.Flusher).Flush()
		}
		for i := 0; i < pacedPieces; i++ {
			evs := []pacedEvent{sc.delta(pacedPiece(i))}
			if i == 0 {
				evs = append(append([]pacedEvent(nil), sc.pre...), evs...)
			}
			write(evs...)
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
		write(sc.end...)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func pacedPiece(i int) string { return fmt.Sprintf("piece%d-", i) }

// pacedClient is a client surface: how to ask for a stream of gpt-4o-mini.
type pacedClient struct {
	name string
	req  func(base string) *http.Request
	// responses marks the /v1/responses surface, served natively only by a
	// responses upstream.
	responses bool
}

var pacedClients = []pacedClient{
	{name: "openai", req: func(base string) *http.Request {
		return pacedRequest(base+"/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	}},
	{name: "messages", req: func(base string) *http.Request {
		r := pacedRequest(base+"/v1/messages", `{"model":"gpt-4o-mini","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
		r.Header.Set("anthropic-version", "2023-06-01")
		return r
	}},
	{name: "alternate-sse", req: func(base string) *http.Request {
		return pacedRequest(base+"/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`)
	}},
	{name: "alternate-json-array", req: func(base string) *http.Request {
		return pacedRequest(base+"/v1beta/models/gpt-4o-mini:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`)
	}},
	{name: "responses", responses: true, req: func(base string) *http.Request {
		return pacedRequest(base+"/v1/responses", `{"model":"gpt-4o-mini","stream":true,"input":"Hi"}`)
	}},
}

func pacedRequest(url, body string) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+testKey)
	return r
}

var pacedChannelTypes = map[string]int{"openai": upstream.TypeOpenAI, "anthropic": upstream.TypeAnthropic, "gemini": upstream.TypeGemini, "responses": upstream.TypeOpenAI}

// TestStreamsReachTheClientEventByEvent fails when any stream path holds an
// event back until the upstream sends the next: for every upstream format,
// client surface and line framing, the client must receive each piece of
// text while the upstream waits for it.
func TestStreamsReachTheClientEventByEvent(t *testing.T) {
	for _, format := range []string{"openai", "anthropic", "gemini", "responses"} {
		for _, cl := range pacedClients {
			if format == "responses" && !cl.responses {
				continue // only the Responses surface is served by it
			}
			for _, eol := range []string{"\n", "\r\n"} {
				name := fmt.Sprintf("%s upstream to %s client, %q framing", format, cl.name, eol)
				t.Run(name, func(t *testing.T) { testPacedStream(t, format, cl, eol) })
			}
		}
	}
}

func testPacedStream(t *testing.T, format string, cl pacedClient, eol string) {
	e := newEnv(t)
	// Buffered so a failed test never blocks on an upstream that gave up;
	// the upstream still cannot send a piece before the test signals.
	next := make(chan struct{}, pacedPieces)
	up := pacedUpstream(t, format, eol, next)
	e.channel("paced", up.URL, func(c *store.Channel) {
		c.Type = pacedChannelTypes[format]
		if cl.responses && format == "openai" {
			c.Settings = map[string]any{"responses": "chat"}
		}
	})
	resp, err := http.DefaultClient.Do(cl.req(e.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	got := readInBackground(resp.Body)
	var seen []byte
	for i := 0; i < pacedPieces; i++ {
		seen = waitForMarker(t, got, seen, pacedPiece(i))
		next <- struct{}{}
	}
}

// readInBackground delivers what the client receives as it arrives.
func readInBackground(body io.Reader) <-chan []byte {
	ch := make(chan []byte, 64)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 4096)
			n, err := body.Read(buf)
			if n > 0 {
				ch <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// waitForMarker reads until marker has arrived. The timeout is only a guard so a
// buffered stream fails instead of hanging: the upstream waits for us.
func waitForMarker(t *testing.T, got <-chan []byte, seen []byte, marker string) []byte {
	t.Helper()
	guard := time.NewTimer(5 * time.Second)
	defer guard.Stop()
	for !bytes.Contains(seen, []byte(marker)) {
		select {
		case b, ok := <-got:
			if !ok {
				t.Fatalf("stream ended before %q; got %s", marker, seen)
			}
			seen = append(seen, b...)
		case <-guard.C:
			t.Fatalf("%q never reached the client while the upstream waited: the stream is held back; got %s", marker, seen)
		}
	}
	return seen
}
