package relay

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A client that leaves a streamed answer early does not make the call
// cheap: the gateway reads the upstream on for a while and bills the usage
// it reports at the end (CONTRACT §13), whether the stream is passed
// through or converted for the client.
func TestStreamLeftByTheClientIsBilledOnTheUsageReportedAfter(t *testing.T) {
	cases := []struct{ name, path, body string }{
		{"passed through", "/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"converted", "/v1/messages", `{"model":"gpt-4o-mini","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			clientLeft := make(chan struct{})
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"word "}}]}` + "\n\n"
				fmt.Fprint(w, chunk)
				w.(http.Flusher).Flush()
				<-clientLeft
				for range 5 {
					time.Sleep(40 * time.Millisecond)
					fmt.Fprint(w, chunk)
					w.(http.Flusher).Flush()
				}
				fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":100000,"completion_tokens":2000,"total_tokens":102000}}`+"\n\ndata: [DONE]\n\n")
			}))
			defer upstream.Close()
			e.channel("main", upstream.URL, nil)
			before := e.balance()

			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+tc.path, stringsReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testKey)
			req.Header.Set("x-api-key", testKey)
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, readAll(resp))
			}
			if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close() // the client leaves after the first line
			close(clientLeft)

			// 100k × 0.15 $/M + 2k × 0.60 $/M = 0.0162 $ = 8,100 units.
			deadline := time.Now().Add(5 * time.Second)
			for before-e.balance() != 8100 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if charged := before - e.balance(); charged != 8100 {
				t.Fatalf("charged %d, want 8100 (the usage the upstream reported after the client left)", charged)
			}
			e.flush()
			row, _ := e.lastConsume()
			if row.PromptTokens != 100000 || row.CompletionTokens != 2000 {
				t.Fatalf("row tokens %d/%d, want 100000/2000", row.PromptTokens, row.CompletionTokens)
			}
		})
	}
}
