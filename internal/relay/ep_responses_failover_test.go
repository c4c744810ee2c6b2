package relay

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// brokenResponsesStream is a channel speaking the Responses API whose
// stream breaks off inside its message, after sending "Once "; it records
// how often it was asked.
func brokenResponsesStream(t *testing.T, asked *int) *httptest.Server {
	events := []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_up","object":"response","created_at":7,"status":"in_progress","model":"gpt-4o-mini","output":[]}}`,
		`{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_up","object":"response","created_at":7,"status":"in_progress","model":"gpt-4o-mini","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_up","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.content_part.added","sequence_number":3,"item_id":"msg_up","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_up","output_index":0,"content_index":0,"delta":"Once "}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		*asked++
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			_, _ = io.WriteString(w, "event: "+gjson.Get(ev, "type").String()+"\ndata: "+ev+"\n\n")
		}
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection breaks mid-message
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A native Responses stream that breaks inside its message is continued
// by the next channel on the same client stream, through the one failover
// mechanism: the continuation asks with the delivered text as the
// assistant's turn, the client sees one response — the same id, item and
// unbroken sequence numbers — ending in response.completed with the whole
// text, and the call is billed once at the first model's price with the
// failover on its row (CONTRACT §22).
func TestABrokenNativeResponsesStreamIsContinuedOnTheNextChannel(t *testing.T) {
	e := newEnv(t)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000, StreamFailover: true})
	asked := 0
	a := e.channel("native", brokenResponsesStream(t, &asked).URL, func(c *store.Channel) { c.Priority = 10 })
	second := &fakeOpenAI{text: "upon a time there was"}
	b := e.channel("chat", newFake(t, second).URL, nil)
	before := e.balance()
	resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Tell me","stream":true}`)
	got := readAll(resp)
	if resp.StatusCode != 200 || strings.Contains(got, "event: error") || !strings.Contains(got, "event: response.completed") {
		t.Fatalf("status %d, not a clean end:\n%s", resp.StatusCode, got)
	}
	if asked != 1 || second.calls() != 1 {
		t.Fatalf("the channels were asked %d and %d times, want once each", asked, second.calls())
	}
	msgs, _ := second.last()["messages"].([]any)
	prefix, _ := msgs[len(msgs)-2].(map[string]any)
	if len(msgs) != 3 || prefix["role"] != "assistant" || prefix["content"] != "Once " {
		t.Fatalf("the continuation was asked with %v: want the delivered text as the assistant's turn", msgs)
	}
	var final gjson.Result
	for i, data := range sseData(got) {
		ev := gjson.Parse(data)
		if ev.Get("sequence_number").Int() != int64(i) {
			t.Fatalf("event %d has sequence_number %d:\n%s", i, ev.Get("sequence_number").Int(), got)
		}
		if id := ev.Get("item_id"); id.Exists() && id.String() != "msg_up" {
			t.Fatalf("event %d names item %s, want the open message msg_up:\n%s", i, id, got)
		}
		final = ev
	}
	whole := "Once upon a time there was"
	if final.Get("type").String() != "response.completed" || final.Get("response.id").String() != "resp_up" ||
		final.Get("response.output.#").Int() != 1 || final.Get("response.output.0.content.0.text").String() != whole {
		t.Fatalf("the last event is not the whole response resp_up:\n%s", final.Raw)
	}
	if n := strings.Count(got, "event: response.created"); n != 1 {
		t.Fatalf("%d response.created events, want one", n)
	}
	row, other := e.lastConsume()
	fo, _ := other["failover"].(map[string]any)
	if fo == nil || fo["from"] != float64(a.ID) || fo["to"] != float64(b.ID) || fo["at_chars"] != float64(5) || other["incomplete"] != nil {
		t.Fatalf("row other %v", other)
	}
	wantOut := tokenize.Count("gpt-4o-mini", whole)
	if row.ChannelID != a.ID || row.CompletionTokens != wantOut || row.PromptTokens == 0 {
		t.Fatalf("row channel %d, %d/%d tokens; want %d, %d out", row.ChannelID, row.PromptTokens, row.CompletionTokens, a.ID, wantOut)
	}
	if charged := before - e.balance(); charged != int64(row.PromptTokens)*50+int64(wantOut)*500 {
		t.Fatalf("charged %d for %d/%d tokens", charged, row.PromptTokens, wantOut)
	}
	if u := final.Get("response.usage.output_tokens").Int(); u != int64(wantOut) {
		t.Fatalf("the final response shows %d output tokens, want the %d billed", u, wantOut)
	}
}

// sseData is the data of each event of an SSE body, in order.
func sseData(body string) []string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}
