package app_test

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	cohereKey    = "co-upstream-key"
	cohereClient = "sk-cohere-client"
	cohereRoot   = "root-cohere"
	cohereChat   = "command-a-03-2025"
	cohereEmbed  = "embed-v4.0"
	cohereRerank = "rerank-v3.5"
)

// The fake's usage: the model's tokens and the (lower) billed units, as
// Cohere reports both. The gateway bills the tokens.
var (
	cohereCallUsage = `{"billed_units":{"input_tokens":37,"output_tokens":28},"tokens":{"input_tokens":913,"output_tokens":83}}`
	cohereTextUsage = `{"billed_units":{"input_tokens":87,"output_tokens":19},"tokens":{"input_tokens":1061,"output_tokens":85}}`
)

// fakeCohere checks what Cohere checks: the Bearer key, the path and a v2
// body (no fields of other wires, roles of v2 only, tool turns naming a
// call made earlier). A request it refuses is answered 400 and recorded.
// It calls get_weather when the last turn is the user's, and answers in
// text once the tool's result is in.
type fakeCohere struct {
	*httptest.Server
	mu       sync.Mutex
	problems []string
	bodies   map[string][]string
}

func newFakeCohere(t *testing.T) *fakeCohere {
	f := &fakeCohere{bodies: map[string][]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	t.Cleanup(func() {
		for _, p := range f.problems {
			t.Errorf("the fake Cohere refused a request: %s", p)
		}
	})
	return f
}

func (f *fakeCohere) refuse(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.problems = append(f.problems, msg)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"id": "err-1", "message": msg})
}

func (f *fakeCohere) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+cohereKey {
		f.refuse(w, 401, "invalid api token")
		return
	}
	if r.Method != http.MethodPost {
		f.refuse(w, 405, "%s %s", r.Method, r.URL.Path)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	if !gjson.ValidBytes(raw) || !gjson.ParseBytes(raw).IsObject() {
		f.refuse(w, 400, "the body is not a JSON object")
		return
	}
	f.mu.Lock()
	f.bodies[r.URL.Path] = append(f.bodies[r.URL.Path], string(raw))
	f.mu.Unlock()
	body := gjson.ParseBytes(raw)
	var err error
	switch r.URL.Path {
	case "/v2/chat":
		if err = checkV2Chat(body); err == nil {
			f.chat(w, body)
		}
	case "/v2/embed":
		if err = checkV2Embed(body); err == nil {
			f.embed(w, body)
		}
	case "/v2/rerank":
		if err = checkV2Rerank(body); err == nil {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"rr-1","results":[{"index":1,"relevance_score":0.98},{"index":0,"relevance_score":0.02}],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}}`)
		}
	default:
		f.refuse(w, 404, "no route for %s", r.URL.Path)
		return
	}
	if err != nil {
		f.refuse(w, 400, "%s: %v", r.URL.Path, err)
	}
}

// allowedKeys refuses fields the v2 object does not have.
func allowedKeys(v gjson.Result, where string, keys ...string) error {
	var err error
	v.ForEach(func(k, _ gjson.Result) bool {
		for _, a := range keys {
			if k.Str == a {
				return true
			}
		}
		err = fmt.Errorf("%s: unknown field %q", where, k.Str)
		return false
	})
	return err
}

func checkV2Chat(b gjson.Result) error {
	if err := allowedKeys(b, "request", "model", "messages", "tools", "strict_tools", "documents", "citation_options",
		"response_format", "safety_mode", "max_tokens", "stop_sequences", "temperature", "seed", "frequency_penalty",
		"presence_penalty", "k", "p", "logprobs", "tool_choice", "thinking", "stream"); err != nil {
		return err
	}
	if b.Get("model").Str != cohereChat {
		return fmt.Errorf("model %q", b.Get("model").Raw)
	}
	if s := b.Get("stream"); s.Exists() && !s.IsBool() {
		return fmt.Errorf("stream must be a boolean")
	}
	if tc := b.Get("tool_choice"); tc.Exists() && tc.Str != "REQUIRED" && tc.Str != "NONE" {
		return fmt.Errorf("tool_choice %s", tc.Raw)
	}
	for i, t := range b.Get("tools").Array() {
		if err := allowedKeys(t, "tool", "type", "function"); err != nil {
			return err
		}
		if t.Get("type").Str != "function" || t.Get("function.name").Str == "" || !t.Get("function.parameters").IsObject() {
			return fmt.Errorf("tools[%d] %s", i, t.Raw)
		}
	}
	msgs := b.Get("messages").Array()
	if len(msgs) == 0 {
		return fmt.Errorf("messages must not be empty")
	}
	calls := map[string]bool{}
	for i, m := range msgs {
		where := fmt.Sprintf("messages[%d]", i)
		switch m.Get("role").Str {
		case "system", "user":
			if err := allowedKeys(m, where, "role", "content"); err != nil {
				return err
			}
			if err := checkContent(m.Get("content"), where, "text", "image_url"); err != nil {
				return err
			}
		case "assistant":
			if err := allowedKeys(m, where, "role", "content", "tool_plan", "tool_calls", "citations"); err != nil {
				return err
			}
			if c := m.Get("content"); c.Exists() {
				if err := checkContent(c, where, "text", "thinking"); err != nil {
					return err
				}
			}
			for j, c := range m.Get("tool_calls").Array() {
				if c.Get("id").Str == "" || c.Get("type").Str != "function" || c.Get("function.name").Str == "" ||
					c.Get("function.arguments").Type != gjson.String || !gjson.Valid(c.Get("function.arguments").Str) {
					return fmt.Errorf("%s.tool_calls[%d] %s", where, j, c.Raw)
				}
				calls[c.Get("id").Str] = true
			}
		case "tool":
			if err := allowedKeys(m, where, "role", "content", "tool_call_id"); err != nil {
				return err
			}
			id := m.Get("tool_call_id").Str
			if id == "" || !calls[id] {
				return fmt.Errorf("%s: tool_call_id %q names no earlier tool call", where, id)
			}
			if err := checkContent(m.Get("content"), where, "text", "document"); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: role %q", where, m.Get("role").Str)
		}
	}
	return nil
}

func checkContent(c gjson.Result, where string, types ...string) error {
	if c.Type == gjson.String {
		return nil
	}
	if !c.IsArray() {
		return fmt.Errorf("%s.content must be a string or a list", where)
	}
	for _, it := range c.Array() {
		ok := false
		for _, t := range types {
			ok = ok || it.Get("type").Str == t
		}
		if !ok {
			return fmt.Errorf("%s.content item %s", where, it.Raw)
		}
	}
	return nil
}

func checkV2Embed(b gjson.Result) error {
	if err := allowedKeys(b, "embed request", "model", "texts", "images", "inputs", "input_type", "embedding_types", "output_dimension", "truncate", "max_tokens"); err != nil {
		return err
	}
	switch {
	case b.Get("model").Str != cohereEmbed:
		return fmt.Errorf("model %s", b.Get("model").Raw)
	case b.Get("input_type").Str != "search_document":
		return fmt.Errorf("input_type %s", b.Get("input_type").Raw)
	case b.Get("embedding_types").Raw != `["float"]`:
		return fmt.Errorf("embedding_types %s", b.Get("embedding_types").Raw)
	case len(b.Get("texts").Array()) == 0:
		return fmt.Errorf("texts must not be empty")
	}
	return nil
}

func checkV2Rerank(b gjson.Result) error {
	if err := allowedKeys(b, "rerank request", "model", "query", "documents", "top_n", "max_tokens_per_doc"); err != nil {
		return err
	}
	if b.Get("model").Str != cohereRerank || b.Get("query").Str == "" {
		return fmt.Errorf("model %s query %s", b.Get("model").Raw, b.Get("query").Raw)
	}
	for _, d := range b.Get("documents").Array() {
		if d.Type != gjson.String {
			return fmt.Errorf("documents must be strings, got %s", d.Raw)
		}
	}
	return nil
}

// embed answers one vector per text, [i+0.5, -i], billing 3 tokens a text.
func (f *fakeCohere) embed(w http.ResponseWriter, b gjson.Result) {
	texts := b.Get("texts").Array()
	vecs := make([][]float64, len(texts))
	for i := range texts {
		vecs[i] = []float64{float64(i) + 0.5, -float64(i)}
	}
	out, _ := json.Marshal(map[string]any{"id": "emb-1", "texts": b.Get("texts").Value(),
		"embeddings": map[string]any{"float": vecs},
		"meta":       map[string]any{"api_version": map[string]any{"version": "2"}, "billed_units": map[string]any{"input_tokens": 3 * len(texts)}}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (f *fakeCohere) chat(w http.ResponseWriter, b gjson.Result) {
	msgs := b.Get("messages").Array()
	answerText := msgs[len(msgs)-1].Get("role").Str == "tool"
	if !b.Get("stream").Bool() {
		w.Header().Set("Content-Type", "application/json")
		if answerText {
			fmt.Fprintf(w, `{"id":"c-2","finish_reason":"COMPLETE","message":{"role":"assistant","content":[{"type":"text","text":"It is 15 degrees in Paris."}]},"usage":%s}`, cohereTextUsage)
			return
		}
		fmt.Fprintf(w, `{"id":"c-1","finish_reason":"TOOL_CALL","message":{"role":"assistant","tool_plan":"I will look up the weather.","tool_calls":[{"id":"get_weather_p1t92w7gfgq7","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]},"usage":%s}`, cohereCallUsage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(data string) {
		typ := gjson.Get(data, "type").Str
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
		fl.Flush()
	}
	send(`{"id":"c-s","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`)
	if answerText {
		send(`{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"text","text":""}}}}`)
		send(`{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"It is 15 degrees"}}}}`)
		send(`{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":" in Paris."}}}}`)
		send(`{"type":"content-end","index":0}`)
		send(`{"type":"message-end","delta":{"finish_reason":"COMPLETE","usage":` + cohereTextUsage + `}}`)
		return
	}
	send(`{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will look up"}}}`)
	send(`{"type":"tool-plan-delta","delta":{"message":{"tool_plan":" the weather."}}}`)
	send(`{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"get_weather_p1t92w7gfgq7","type":"function","function":{"name":"get_weather","arguments":""}}}}}`)
	send(`{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\"location\":"}}}}}`)
	send(`{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":" \"Paris\"}"}}}}}`)
	send(`{"type":"tool-call-end","index":0}`)
	send(`{"type":"message-end","delta":{"finish_reason":"TOOL_CALL","usage":` + cohereCallUsage + `}}`)
}

func cohereGateway(t *testing.T, f *fakeCohere) *testkit.Gateway {
	weight := 1
	return testkit.Start(t,
		testkit.WithRootToken(cohereRoot),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "alice", Key: cohereClient}),
		testkit.WithChannels(config.SeedChannel{Name: "cohere", Type: "cohere", BaseURL: f.URL, Key: cohereKey,
			Models: []string{cohereChat, cohereEmbed, cohereRerank}, Groups: []string{"default"}, Weight: &weight,
			Settings: map[string]any{"failure_threshold": 1000}}),
		// $2 in and $4 out per million tokens at 500,000 quota per dollar:
		// a call costs input + 2 × output quota.
		testkit.WithModels(map[string]config.SeedPrice{
			cohereChat:   {InputPerMTok: 2, OutputPerMTok: 4},
			cohereEmbed:  {InputPerMTok: 2},
			cohereRerank: {PerCall: 0.002},
		}))
}

// consumeRow waits for the n-th consume log row and returns it.
func consumeRow(t *testing.T, g *testkit.Gateway, n int) map[string]any {
	t.Helper()
	var row map[string]any
	if !testkit.WaitFor(5*time.Second, 20*time.Millisecond, func() bool {
		_, logs := g.Do(t, "GET", "/api/logs?type=consume&page_size=100", cohereRoot, nil)
		items, _ := logs["items"].([]any)
		if len(items) < n {
			return false
		}
		row = items[0].(map[string]any)
		return true
	}) {
		t.Fatalf("no consume row %d", n)
	}
	return row
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// sseData reads an SSE answer's data payloads, [DONE] left out.
func sseData(t *testing.T, resp *http.Response) []gjson.Result {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream answered %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var out []gjson.Result
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			if !gjson.Valid(d) {
				t.Fatalf("stream data is not JSON: %s", d)
			}
			out = append(out, gjson.Parse(d))
		}
	}
	return out
}

// answer is what a client surface got back: the text, the one tool call
// and the finish signal, read the same way from a whole answer or a stream.
type answer struct {
	text, callID, callName, callArgs, finish string
}

// cohereSurface is one client surface: how it asks (first turn, then with
// the tool's result) and how its answers read.
type cohereSurface struct {
	name string
	send func(g *testkit.Gateway, stream bool, prior *answer) *http.Response
	read func(t *testing.T, resp *http.Response, stream bool) answer
	// callFinish and textFinish are the surface's finish signals.
	callFinish, textFinish string
}

func cohereSurfaces(t *testing.T) []cohereSurface {
	weatherSchema := map[string]any{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}, "required": []string{"location"}}
	jsonBody := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	return []cohereSurface{
		{
			name: "openai", callFinish: "tool_calls", textFinish: "stop",
			send: func(g *testkit.Gateway, stream bool, prior *answer) *http.Response {
				msgs := []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}
				if prior != nil {
					msgs = append(msgs,
						map[string]any{"role": "assistant", "content": prior.text, "tool_calls": []any{map[string]any{"id": prior.callID, "type": "function",
							"function": map[string]any{"name": prior.callName, "arguments": prior.callArgs}}}},
						map[string]any{"role": "tool", "tool_call_id": prior.callID, "content": `{"temp":15}`})
				}
				return post(t, g.URL+"/v1/chat/completions", map[string]string{"Authorization": "Bearer " + cohereClient}, jsonBody(map[string]any{
					"model": cohereChat, "max_tokens": 256, "stream": stream, "messages": msgs,
					"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Weather for a place", "parameters": weatherSchema}}}}))
			},
			read: func(t *testing.T, resp *http.Response, stream bool) answer {
				var a answer
				if !stream {
					b := readGJSON(t, resp)
					m := b.Get("choices.0.message")
					a.text, a.finish = m.Get("content").Str, b.Get("choices.0.finish_reason").Str
					a.callID, a.callName, a.callArgs = m.Get("tool_calls.0.id").Str, m.Get("tool_calls.0.function.name").Str, m.Get("tool_calls.0.function.arguments").Str
					return a
				}
				for _, d := range sseData(t, resp) {
					delta := d.Get("choices.0.delta")
					a.text += delta.Get("content").Str
					if tc := delta.Get("tool_calls.0"); tc.Exists() {
						if id := tc.Get("id").Str; id != "" {
							a.callID = id
						}
						a.callName += tc.Get("function.name").Str
						a.callArgs += tc.Get("function.arguments").Str
					}
					if f := d.Get("choices.0.finish_reason").Str; f != "" {
						a.finish = f
					}
				}
				return a
			},
		},
		{
			name: "messages", callFinish: "tool_use", textFinish: "end_turn",
			send: func(g *testkit.Gateway, stream bool, prior *answer) *http.Response {
				msgs := []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}
				if prior != nil {
					var input any
					_ = json.Unmarshal([]byte(prior.callArgs), &input)
					msgs = append(msgs,
						map[string]any{"role": "assistant", "content": []any{
							map[string]any{"type": "text", "text": prior.text},
							map[string]any{"type": "tool_use", "id": prior.callID, "name": prior.callName, "input": input}}},
						map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": prior.callID, "content": `{"temp":15}`}}})
				}
				return post(t, g.URL+"/v1/messages", map[string]string{"x-api-key": cohereClient, "anthropic-version": "2023-06-01"}, jsonBody(map[string]any{
					"model": cohereChat, "max_tokens": 256, "stream": stream, "messages": msgs,
					"tools": []any{map[string]any{"name": "get_weather", "description": "Weather for a place", "input_schema": weatherSchema}}}))
			},
			read: func(t *testing.T, resp *http.Response, stream bool) answer {
				var a answer
				if !stream {
					b := readGJSON(t, resp)
					a.finish = b.Get("stop_reason").Str
					for _, c := range b.Get("content").Array() {
						switch c.Get("type").Str {
						case "text":
							a.text += c.Get("text").Str
						case "tool_use":
							a.callID, a.callName, a.callArgs = c.Get("id").Str, c.Get("name").Str, c.Get("input").Raw
						}
					}
					return a
				}
				for _, d := range sseData(t, resp) {
					switch d.Get("type").Str {
					case "content_block_start":
						if cb := d.Get("content_block"); cb.Get("type").Str == "tool_use" {
							a.callID, a.callName = cb.Get("id").Str, cb.Get("name").Str
						}
					case "content_block_delta":
						a.text += d.Get("delta.text").Str
						a.callArgs += d.Get("delta.partial_json").Str
					case "message_delta":
						a.finish = d.Get("delta.stop_reason").Str
					}
				}
				return a
			},
		},
		{
			name: "alternate-native", callFinish: "STOP", textFinish: "STOP",
			send: func(g *testkit.Gateway, stream bool, prior *answer) *http.Response {
				contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Weather in Paris?"}}}}
				if prior != nil {
					var args any
					_ = json.Unmarshal([]byte(prior.callArgs), &args)
					call := map[string]any{"name": prior.callName, "args": args}
					result := map[string]any{"name": prior.callName, "response": map[string]any{"temp": 15}}
					if prior.callID != "" {
						call["id"], result["id"] = prior.callID, prior.callID
					}
					contents = append(contents,
						map[string]any{"role": "model", "parts": []any{map[string]any{"text": prior.text}, map[string]any{"functionCall": call}}},
						map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": result}}})
				}
				action := "generateContent"
				if stream {
					action = "streamGenerateContent?alt=sse"
				}
				return post(t, g.URL+"/v1beta/models/"+cohereChat+":"+action, map[string]string{"x-goog-api-key": cohereClient}, jsonBody(map[string]any{
					"contents": contents, "generationConfig": map[string]any{"maxOutputTokens": 256},
					"tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "get_weather", "description": "Weather for a place", "parameters": weatherSchema}}}}}))
			},
			read: func(t *testing.T, resp *http.Response, stream bool) answer {
				var a answer
				chunks := []gjson.Result{}
				if stream {
					chunks = sseData(t, resp)
				} else {
					chunks = append(chunks, readGJSON(t, resp))
				}
				for _, b := range chunks {
					for _, p := range b.Get("candidates.0.content.parts").Array() {
						a.text += p.Get("text").Str
						if fc := p.Get("functionCall"); fc.Exists() {
							a.callID, a.callName, a.callArgs = fc.Get("id").Str, fc.Get("name").Str, fc.Get("args").Raw
						}
					}
					if f := b.Get("candidates.0.finishReason").Str; f != "" {
						a.finish = f
					}
				}
				return a
			},
		},
	}
}

func readGJSON(t *testing.T, resp *http.Response) gjson.Result {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !gjson.ValidBytes(b) {
		t.Fatalf("answered %d: %s", resp.StatusCode, b)
	}
	return gjson.ParseBytes(b)
}

func TestCohereChannelsServeEverySurfaceWithToolCallsBilledFromTheBilledUnits(t *testing.T) {
	f := newFakeCohere(t)
	g := cohereGateway(t, f)
	rows := 0
	var spent int64
	for _, s := range cohereSurfaces(t) {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", s.name, stream), func(t *testing.T) {
				call := s.read(t, s.send(g, stream, nil), stream)
				if call.callName != "get_weather" || gjson.Get(call.callArgs, "location").Str != "Paris" || call.finish != s.callFinish {
					t.Fatalf("first turn: %+v", call)
				}
				if !strings.Contains(call.text, "I will look up the weather.") {
					t.Fatalf("the tool plan did not reach the client as text: %+v", call)
				}
				rows++
				row := consumeRow(t, g, rows)
				// 37 in × 1 + 28 out × 2 quota: the billed units, what Cohere
				// charges, not its token counts (which include its preamble).
				if row["model"] != cohereChat || num(row["prompt_tokens"]) != 37 || num(row["completion_tokens"]) != 28 || num(row["quota"]) != 93 {
					t.Fatalf("the tool call was billed %v", row)
				}
				spent += 93

				text := s.read(t, s.send(g, stream, &call), stream)
				if text.text != "It is 15 degrees in Paris." || text.callName != "" || text.finish != s.textFinish {
					t.Fatalf("second turn: %+v", text)
				}
				rows++
				row = consumeRow(t, g, rows)
				if num(row["prompt_tokens"]) != 87 || num(row["completion_tokens"]) != 19 || num(row["quota"]) != 87+2*19 {
					t.Fatalf("the answer was billed %v", row)
				}
				spent += 87 + 2*19
			})
		}
	}
	if got := cohereBalance(t, g); got != 10_000_000-spent {
		t.Fatalf("alice has %d, want %d after spending %d", got, 10_000_000-spent, spent)
	}
	// Every second turn carried the tool's result back as a v2 tool turn.
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, b := range f.bodies["/v2/chat"] {
		if i%2 == 1 && gjson.Get(b, `messages.#(role=="tool").tool_call_id`).Str == "" {
			t.Errorf("turn %d carried no tool result: %s", i, b)
		}
	}
}

func cohereBalance(t *testing.T, g *testkit.Gateway) int64 {
	t.Helper()
	_, body := g.Do(t, "GET", "/api/users?page_size=100", cohereRoot, nil)
	for _, it := range body["items"].([]any) {
		if u := it.(map[string]any); u["username"] == "alice" {
			return num(u["quota"])
		}
	}
	t.Fatal("alice not listed")
	return 0
}

func TestCohereEmbeddingsAndRerankAreServedAndBilledAsTheRelayBillsThem(t *testing.T) {
	f := newFakeCohere(t)
	g := cohereGateway(t, f)
	rows := 0
	expectRow := func(t *testing.T, model string, prompt, quota int64) {
		t.Helper()
		rows++
		row := consumeRow(t, g, rows)
		if row["model"] != model || num(row["prompt_tokens"]) != prompt || num(row["quota"]) != quota {
			t.Fatalf("billed %v, want %s with %d tokens for %d", row, model, prompt, quota)
		}
	}
	t.Run("openai embeddings as floats", func(t *testing.T) {
		code, body := g.Do(t, "POST", "/v1/embeddings", cohereClient, map[string]any{"model": cohereEmbed, "input": []string{"a", "b"}})
		data, _ := body["data"].([]any)
		if code != 200 || len(data) != 2 || fmt.Sprint(data[1].(map[string]any)["embedding"]) != "[1.5 -1]" {
			t.Fatalf("%d %v", code, body)
		}
		// Cohere's billed 6 tokens at $2 per million tokens.
		expectRow(t, cohereEmbed, 6, 6)
	})
	t.Run("openai embeddings in base64", func(t *testing.T) {
		code, body := g.Do(t, "POST", "/v1/embeddings", cohereClient, map[string]any{"model": cohereEmbed, "input": "a", "encoding_format": "base64"})
		data, _ := body["data"].([]any)
		if code != 200 || len(data) != 1 {
			t.Fatalf("%d %v", code, body)
		}
		raw, err := base64.StdEncoding.DecodeString(data[0].(map[string]any)["embedding"].(string))
		if err != nil || len(raw) != 8 || math.Float32frombits(binary.LittleEndian.Uint32(raw)) != 0.5 {
			t.Fatalf("base64 vector %v %v", raw, err)
		}
		expectRow(t, cohereEmbed, 3, 3)
	})
	t.Run("alternate-native batchEmbedContents", func(t *testing.T) {
		req := map[string]any{"requests": []any{
			map[string]any{"model": "models/" + cohereEmbed, "content": map[string]any{"parts": []any{map[string]any{"text": "a"}}}},
			map[string]any{"model": "models/" + cohereEmbed, "content": map[string]any{"parts": []any{map[string]any{"text": "b"}}}},
			map[string]any{"model": "models/" + cohereEmbed, "content": map[string]any{"parts": []any{map[string]any{"text": "c"}}}},
		}}
		resp := post(t, g.URL+"/v1beta/models/"+cohereEmbed+":batchEmbedContents", map[string]string{"x-goog-api-key": cohereClient}, mustJSON(req))
		b := readGJSON(t, resp)
		if n := len(b.Get("embeddings").Array()); n != 3 || b.Get("embeddings.2.values").Raw != "[2.5,-2]" {
			t.Fatalf("%s", b.Raw)
		}
		expectRow(t, cohereEmbed, 9, 9)
	})
	t.Run("rerank", func(t *testing.T) {
		code, body := g.Do(t, "POST", "/v1/rerank", cohereClient, map[string]any{"model": cohereRerank, "query": "capital of France",
			"documents": []any{"Berlin", map[string]any{"text": "Paris"}}, "top_n": 2})
		results, _ := body["results"].([]any)
		if code != 200 || len(results) != 2 || results[0].(map[string]any)["index"] != float64(1) || results[0].(map[string]any)["relevance_score"] != 0.98 {
			t.Fatalf("%d %v", code, body)
		}
		// $0.002 per call; the model has no token price.
		expectRow(t, cohereRerank, 0, 1000)
		f.mu.Lock()
		sent := f.bodies["/v2/rerank"][0]
		f.mu.Unlock()
		if gjson.Get(sent, "documents").Raw != `["Berlin","Paris"]` {
			t.Fatalf("documents sent as %s", sent)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
