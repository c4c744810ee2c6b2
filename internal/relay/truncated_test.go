package relay

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// cutUpstream streams format's opening events and three pieces of text,
// then breaks off: "eof" ends the body cleanly but without the wire's end
// marker, "reset" aborts the connection in the middle of an event.
func cutUpstream(t *testing.T, format, how string) *httptest.Server {
	sc := pacedScripts[format]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		var b strings.Builder
		evs := append([]pacedEvent(nil), sc.pre...)
		for i := 0; i < 3; i++ {
			evs = append(evs, sc.delta(pacedPiece(i)))
		}
		for _, ev := range evs {
			if ev.name != "" {
				b.WriteString("event: " + ev.name + "\n")
			}
			b.WriteString("data: " + ev.data + "\n\n")
		}
		if how == "reset" {
			b.WriteString(`data: {"half an ev`)
		}
		_, _ = io.WriteString(w, b.String())
		w.(http.Flusher).Flush()
		if how == "reset" {
			panic(http.ErrAbortHandler)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A stream the upstream breaks after the first byte never ends cleanly:
// the client gets its dialect's error event (and no end marker), passed
// through and converted, and the row says incomplete with the prompt and
// the delivered output billed (CONTRACT §22).
func TestATruncatedStreamEndsWithTheDialectsErrorAndBillsWhatWasDelivered(t *testing.T) {
	clients := map[string]pacedClient{}
	for _, cl := range pacedClients {
		clients[cl.name] = cl
	}
	// errorMark is what the client's dialect says on a broken stream;
	// endMark what only a whole stream carries.
	dialect := map[string]struct{ errorMark, endMark string }{
		"openai":               {"data: {\"error\":{\"message\":", "[DONE]"},
		"messages":             {"event: error\ndata: {\"type\":\"error\",\"error\":{", "message_stop"},
		"alternate-sse":        {"data: {\"error\":{\"code\":502", "finishReason"},
		"alternate-json-array": {",\r\n{\"error\":{\"code\":502", "finishReason"},
	}
	cases := []struct {
		upstream, client string
		reportedIn       int
	}{
		{"openai", "openai", 0},
		{"openai", "messages", 0},
		{"openai", "alternate-sse", 0},
		{"openai", "alternate-json-array", 0},
		{"anthropic", "openai", 1000},
		{"anthropic", "messages", 1000},
		{"gemini", "alternate-sse", 1000},
		{"gemini", "alternate-json-array", 1000},
		{"gemini", "openai", 1000},
		{"gemini", "messages", 1000},
	}
	for _, how := range []string{"eof", "reset"} {
		for _, tc := range cases {
			t.Run(how+" "+tc.upstream+" upstream to "+tc.client+" client", func(t *testing.T) {
				e := newEnv(t)
				e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000})
				e.channel("up", cutUpstream(t, tc.upstream, how).URL, func(c *store.Channel) { c.Type = pacedChannelTypes[tc.upstream] })
				before := e.balance()

				req := clients[tc.client].req(e.srv.URL)
				body, _ := io.ReadAll(req.Body)
				req.Body = io.NopCloser(strings.NewReader(string(body)))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(resp)
				if resp.StatusCode != 200 || !strings.Contains(got, pacedPiece(2)) {
					t.Fatalf("status %d, body %s", resp.StatusCode, got)
				}
				d := dialect[tc.client]
				if !strings.Contains(got, d.errorMark) || strings.Contains(got, d.endMark) {
					t.Fatalf("client saw a clean end or no error event (want %q, not %q):\n%s", d.errorMark, d.endMark, got)
				}
				if tc.client == "alternate-json-array" && !strings.HasSuffix(got, "}]") {
					t.Fatalf("the JSON array is not closed after the error: %s", got)
				}

				promptFmt := map[string]string{"alternate-json-array": "alternate-sse"}[tc.client]
				if promptFmt == "" {
					promptFmt = tc.client
				}
				wantIn := max(promptOf(t, e, promptFmt, body), tc.reportedIn)
				wantOut := max(tokenize.Count("gpt-4o-mini", pacedPiece(0)+pacedPiece(1)+pacedPiece(2)), 1)
				e.flush()
				row, other := e.lastConsume()
				if row.PromptTokens != wantIn || row.CompletionTokens != wantOut || other["incomplete"] != true {
					t.Fatalf("row %d/%d tokens, other %v; want %d/%d and incomplete", row.PromptTokens, row.CompletionTokens, other, wantIn, wantOut)
				}
				if charged, want := before-e.balance(), int64(wantIn)*50+int64(wantOut)*500; charged != want {
					t.Fatalf("charged %d, want %d", charged, want)
				}
			})
		}
	}
}

// A legacy completions stream cut before [DONE] or a finish_reason ends
// with the OpenAI error event too, and is billed as delivered.
func TestATruncatedCompletionsStreamEndsWithAnError(t *testing.T) {
	e := newEnv(t)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ {
			_, _ = io.WriteString(w, `data: {"id":"c1","object":"text_completion","model":"m","choices":[{"index":0,"text":"`+pacedPiece(i)+`","finish_reason":null}]}`+"\n\n")
		}
	}))
	defer srv.Close()
	e.channel("up", srv.URL, nil)
	resp := e.post("/v1/completions", testKey, `{"model":"gpt-4o-mini","stream":true,"prompt":"Say"}`)
	got := readAll(resp)
	if resp.StatusCode != 200 || !strings.Contains(got, pacedPiece(2)) || !strings.Contains(got, `data: {"error":{"message":`) || strings.Contains(got, "[DONE]") {
		t.Fatalf("status %d, want the pieces then an error event and no [DONE]:\n%s", resp.StatusCode, got)
	}
	if _, other := e.lastConsume(); other["incomplete"] != true {
		t.Fatalf("other = %v, want incomplete", other)
	}
}
