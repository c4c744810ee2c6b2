package relay

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// leftUpstream streams the pre events and every piece of format's script,
// then, instead of ending, waits for its request to be cancelled and
// reports on cancelled whether that came within its guard (5 s, half the
// old 10 s read-on): the provider's own view of whether the gateway closed
// the request when the client left.
func leftUpstream(t *testing.T, format string, cancelled chan<- bool) *httptest.Server {
	sc := pacedScripts[format]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		var b strings.Builder
		evs := append([]pacedEvent(nil), sc.pre...)
		for i := 0; i < pacedPieces; i++ {
			evs = append(evs, sc.delta(pacedPiece(i)))
		}
		for _, ev := range evs {
			if ev.name != "" {
				b.WriteString("event: " + ev.name + "\n")
			}
			b.WriteString("data: " + ev.data + "\n\n")
		}
		_, _ = io.WriteString(w, b.String())
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			cancelled <- true
		case <-time.After(5 * time.Second):
			cancelled <- false
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A client that leaves a stream ends the upstream request at once, and the
// call is billed the prompt and the output it received, counted with the
// model's tokenizer, or what the upstream reported when that is larger
// (messages-wire and alternate-native report input early) — in the three
// client formats, passed through and converted (CONTRACT §13).
func TestAClientThatLeavesAStreamClosesTheUpstreamAndPaysWhatItReceived(t *testing.T) {
	clients := map[string]pacedClient{}
	for _, cl := range pacedClients {
		clients[cl.name] = cl
	}
	cases := []struct {
		upstream, client string
		// reportedIn is the input the upstream reported before the client
		// left (0: none).
		reportedIn int
	}{
		{"openai", "openai", 0},
		{"openai", "messages", 0},
		{"openai", "alternate-sse", 0},
		{"anthropic", "openai", 1000},
		{"anthropic", "messages", 1000},
		{"gemini", "alternate-sse", 1000},
		{"gemini", "openai", 1000},
	}
	for _, tc := range cases {
		t.Run(tc.upstream+" upstream to "+tc.client+" client", func(t *testing.T) {
			e := newEnv(t)
			// 100 $ and 1,000 $ per million tokens: 50 and 500 units a token.
			e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000})
			cancelled := make(chan bool, 1)
			e.channel("up", leftUpstream(t, tc.upstream, cancelled).URL, func(c *store.Channel) { c.Type = pacedChannelTypes[tc.upstream] })
			before := e.balance()

			cl := clients[tc.client]
			req := cl.req(e.srv.URL)
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(strings.NewReader(string(body)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, readAll(resp))
			}
			waitForMarker(t, readInBackground(resp.Body), nil, pacedPiece(pacedPieces-1))
			resp.Body.Close() // the client leaves with every piece received

			if !<-cancelled {
				t.Fatal("the upstream request was still open 5 s after the client left")
			}
			prompt := promptOf(t, e, tc.client, body)
			delivered := tokenize.Count("gpt-4o-mini", pacedPiece(0)+pacedPiece(1)+pacedPiece(2))
			wantIn, wantOut := max(prompt, tc.reportedIn), max(delivered, 1)
			want := int64(wantIn)*50 + int64(wantOut)*500
			e.awaitConsumeRow()
			if charged := before - e.balance(); charged != want {
				t.Fatalf("charged %d, want %d (%d prompt and %d delivered tokens)", charged, want, wantIn, wantOut)
			}
			e.flush()
			row, other := e.lastConsume()
			if row.PromptTokens != wantIn || row.CompletionTokens != wantOut || other["client_left"] != true {
				t.Fatalf("row %d/%d tokens, other %v; want %d/%d and client_left", row.PromptTokens, row.CompletionTokens, other, wantIn, wantOut)
			}
		})
	}
}

// promptOf is the gateway's count of a client body's prompt.
func promptOf(t *testing.T, e *env, client string, body []byte) int {
	t.Helper()
	format := map[string]protocol.Format{"openai": protocol.OpenAI, "messages": protocol.Anthropic, "alternate-sse": protocol.Gemini}[client]
	req, err := e.relay.Codecs[format].DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return countPrompt("gpt-4o-mini", req)
}

// A stream whose upstream answered is never free: a client that leaves
// before the first event still pays its prompt.
func TestAClientThatLeavesBeforeTheFirstEventPaysItsPrompt(t *testing.T) {
	e := newEnv(t)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000})
	cancelled := make(chan bool, 1)
	headers := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		close(headers)
		select {
		case <-r.Context().Done():
			cancelled <- true
		case <-time.After(5 * time.Second):
			cancelled <- false
		}
	}))
	defer srv.Close()
	e.channel("up", srv.URL, nil)
	before := e.balance()
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Tell me a long story"}]}`
	req := pacedRequest(e.srv.URL+"/v1/chat/completions", body)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-headers; time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := http.DefaultClient.Do(req.WithContext(ctx)); err == nil {
		t.Fatal("the client's request was not cancelled")
	}
	if !<-cancelled {
		t.Fatal("the upstream request was still open 5 s after the client left")
	}
	prompt := promptOf(t, e, "openai", []byte(body))
	want := int64(prompt) * 50
	e.awaitConsumeRow()
	if charged := before - e.balance(); charged != want {
		t.Fatalf("charged %d, want %d (the %d prompt tokens)", charged, want, prompt)
	}
	e.flush()
	if _, other := e.lastConsume(); other["client_left"] != true {
		t.Fatalf("other = %v, want client_left", other)
	}
}

// An image stream's output cannot be counted: a client that leaves it is
// billed the reservation, and the upstream is closed at once.
func TestAClientThatLeavesAnImageStreamPaysTheReservation(t *testing.T) {
	e := newEnv(t)
	e.price("gpt-image-1", store.ModelPrice{PerCall: 0.04, InputPerMTok: 5, OutputPerMTok: 40})
	cancelled := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: image_generation.partial_image\ndata: {\"type\":\"image_generation.partial_image\",\"b64_json\":\"cGFydA==\",\"partial_image_index\":0}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			cancelled <- true
		case <-time.After(5 * time.Second):
			cancelled <- false
		}
	}))
	defer srv.Close()
	e.channel("img", srv.URL, func(c *store.Channel) { c.Models = []string{"gpt-image-1"} })
	before := e.balance()
	resp := e.post("/v1/images/generations", testKey, `{"model":"gpt-image-1","prompt":"a cat","stream":true,"partial_images":1}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, readAll(resp))
	}
	waitForMarker(t, readInBackground(resp.Body), nil, "partial_image_index")
	resp.Body.Close()
	if !<-cancelled {
		t.Fatal("the upstream request was still open 5 s after the client left")
	}
	// The reservation is taken from the balance at admission: wait for
	// the row that settles it.
	e.awaitConsumeRow()
	const reserved = 20000 // one image at 0.04 $, × 500,000/$
	if charged := before - e.balance(); charged != reserved {
		t.Fatalf("charged %d, want the %d reserved", charged, reserved)
	}
	if _, other := e.lastConsume(); other["client_left"] != true {
		t.Fatalf("other = %v, want client_left", other)
	}
}

// awaitConsumeRow waits (at most 5 s) for the row a call settles with
// after its client left.
func (e *env) awaitConsumeRow() {
	e.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(e.rows(store.LogConsume)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatal("no consume row within 5 s")
		}
	}
}
