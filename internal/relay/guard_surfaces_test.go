package relay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// guardUpstream is an OpenAI-type upstream of every surface that answers
// with text (completions, Responses) streaming its answer word by word, and
// answers the others the simplest way; it records each body.
type guardUpstream struct {
	mu     sync.Mutex
	bodies []seenRequest
	answer string
}

func newGuardUpstream(t *testing.T, answer string) (*guardUpstream, string) {
	f := &guardUpstream{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := record(t, r)
		f.mu.Lock()
		f.bodies = append(f.bodies, s)
		f.mu.Unlock()
		f.serve(w, s)
	}))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

const guardUsage = `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`

func (f *guardUpstream) serve(w http.ResponseWriter, s seenRequest) {
	words := strings.SplitAfter(f.answer, " ")
	stream := s.json("stream").Bool()
	switch s.path {
	case "/v1/completions":
		if !stream {
			writeJSONString(w, fmt.Sprintf(`{"id":"c","object":"text_completion","choices":[{"index":0,"text":%q,"finish_reason":"stop"}],"usage":%s}`, f.answer, guardUsage))
			return
		}
		var evs [][2]string
		for _, wd := range words {
			evs = append(evs, [2]string{"", fmt.Sprintf(`{"id":"c","object":"text_completion","choices":[{"index":0,"text":%q,"finish_reason":null}]}`, wd)})
		}
		evs = append(evs, [2]string{"", `{"id":"c","object":"text_completion","choices":[{"index":0,"text":"","finish_reason":"stop"}]}`},
			[2]string{"", `{"id":"c","object":"text_completion","choices":[],"usage":` + guardUsage + `}`}, [2]string{"", "[DONE]"})
		writeSSE(w, evs...)
	case "/v1/responses":
		full := strings.Replace(respObject("resp_1", "m", `,"usage":`+respUsage), "Hello there", f.answer, 1)
		if !stream {
			writeJSONString(w, full)
			return
		}
		evs := [][2]string{{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`}}
		for i, wd := range words {
			evs = append(evs, [2]string{"response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":%q}`, i+1, wd)})
		}
		evs = append(evs, [2]string{"response.output_text.done", fmt.Sprintf(`{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":%q}`, f.answer)},
			[2]string{"response.completed", `{"type":"response.completed","response":` + full + `}`})
		writeSSE(w, evs...)
	case "/v1/embeddings":
		writeJSONString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model":"x","usage":{"prompt_tokens":10,"total_tokens":10}}`)
	case "/v1/images/generations":
		writeJSONString(w, `{"created":1,"data":[{"url":"https://img.example/0.png"}]}`)
	case "/v1/moderations":
		writeJSONString(w, `{"id":"modr-1","results":[{"flagged":false}]}`)
	default:
		http.Error(w, "no such path "+s.path, http.StatusNotFound)
	}
}

func (f *guardUpstream) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.bodies...)
}

// surfaceCase is one surface that sends user text upstream, with a body
// that carries the prompt.
type surfaceCase struct {
	name, path string
	body       func(prompt string) string
}

var guardSurfaces = []surfaceCase{
	{"completions", "/v1/completions", func(p string) string { return `{"model":"gpt-4o-mini","prompt":` + jsonString(p) + `}` }},
	{"embeddings", "/v1/embeddings", func(p string) string { return `{"model":"gpt-4o-mini","input":["fine",` + jsonString(p) + `]}` }},
	{"images", "/v1/images/generations", func(p string) string { return `{"model":"gpt-4o-mini","prompt":` + jsonString(p) + `}` }},
	{"moderations", "/v1/moderations", func(p string) string { return `{"model":"gpt-4o-mini","input":` + jsonString(p) + `}` }},
	{"responses", "/v1/responses", func(p string) string {
		return `{"model":"gpt-4o-mini","instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":` + jsonString(p) + `}]}]}`
	}},
	{"responses-string", "/v1/responses", func(p string) string { return `{"model":"gpt-4o-mini","input":` + jsonString(p) + `}` }},
}

func TestGuardrailBlocksEverySurfaceBeforeTheUpstreamAndChargesNothing(t *testing.T) {
	for _, sc := range guardSurfaces {
		t.Run(sc.name, func(t *testing.T) {
			e := newEnv(t)
			up, url := newGuardUpstream(t, "fine")
			e.channel("a", url, nil)
			e.guardrails(guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII})
			before := e.balance()
			resp := e.request(sc.path, map[string]string{"Authorization": "Bearer " + testKey}, sc.body(cardPrompt))
			out := readAll(resp)
			if resp.StatusCode != 400 || gjson.Get(out, "error.code").Str != "guardrail_blocked" || !strings.Contains(out, "no-cards") || strings.Contains(out, "4111") {
				t.Fatalf("status %d body %s", resp.StatusCode, out)
			}
			if n := len(up.seen()); n != 0 {
				t.Fatalf("the upstream saw %d calls", n)
			}
			if e.balance() != before {
				t.Fatalf("balance moved %d → %d", before, e.balance())
			}
			if kinds, _ := e.ledgerKinds(); kinds["reserve"]+kinds["settle"]+kinds["refund"] != 0 {
				t.Fatalf("a reservation was taken: %v", kinds)
			}
			rows := e.rows("error")
			if len(rows) != 1 || rows[0].Quota != 0 {
				t.Fatalf("error rows %+v", rows)
			}
			if recs := guardOther(t, rows[0].Other); len(recs) != 1 || recs[0].Matches["card"] != 1 || strings.Contains(string(rows[0].Other), "4111") {
				t.Fatalf("row other %s", rows[0].Other)
			}
		})
	}
}

func TestGuardrailRedactsEverySurfaceBeforeTheUpstream(t *testing.T) {
	for _, sc := range guardSurfaces {
		t.Run(sc.name, func(t *testing.T) {
			e := newEnv(t)
			up, url := newGuardUpstream(t, "fine")
			e.channel("a", url, nil)
			e.guardrails(guardrail.Spec{Type: guardrail.TypePII, Config: json.RawMessage(`{"action":"redact"}`)})
			resp := e.request(sc.path, map[string]string{"Authorization": "Bearer " + testKey}, sc.body(cardPrompt))
			out := readAll(resp)
			seen := up.seen()
			if resp.StatusCode != 200 || len(seen) != 1 {
				t.Fatalf("status %d body %s, %d upstream calls", resp.StatusCode, out, len(seen))
			}
			if sent := string(seen[0].raw); strings.Contains(sent, "4111") || !strings.Contains(sent, "[REDACTED:card]") || !strings.Contains(sent, `"model"`) {
				t.Fatalf("upstream got %s", sent)
			}
			_, other := e.lastConsume()
			if gs, _ := other["guardrails"].([]any); len(gs) != 1 {
				t.Fatalf("row other %v", other)
			}
		})
	}
}

// answerCase is a surface whose answer a guardrail checks.
type answerCase struct {
	name, path string
	body       func(stream bool) string
}

var guardAnswers = []answerCase{
	{"completions", "/v1/completions", func(s bool) string { return `{"model":"gpt-4o-mini","prompt":"hi","stream":` + jsonBool(s) + `}` }},
	{"responses", "/v1/responses", func(s bool) string { return `{"model":"gpt-4o-mini","input":"hi","stream":` + jsonBool(s) + `}` }},
}

const cardAnswer = "Sure. Some filler text here and more filler text. Your card 4111 1111 1111 1111 is on file. More words follow after it, and then some."

func TestGuardrailBlockedAnswerOfEverySurfaceIsBilled(t *testing.T) {
	for _, ac := range guardAnswers {
		t.Run(ac.name, func(t *testing.T) {
			e := newEnv(t)
			_, url := newGuardUpstream(t, cardAnswer)
			e.channel("a", url, nil)
			e.guardrails(guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII, Stages: []string{"response"}})
			before := e.balance()
			resp := e.request(ac.path, map[string]string{"Authorization": "Bearer " + testKey}, ac.body(false))
			out := readAll(resp)
			if resp.StatusCode != 400 || gjson.Get(out, "error.code").Str != "guardrail_blocked" || strings.Contains(out, "4111") {
				t.Fatalf("status %d body %s", resp.StatusCode, out)
			}
			rows := e.rows("consume")
			if len(rows) != 1 || rows[0].Quota <= 0 || e.balance() != before-rows[0].Quota {
				t.Fatalf("consume rows %+v, balance %d → %d", rows, before, e.balance())
			}
			if recs := guardOther(t, rows[0].Other); len(recs) != 1 || recs[0].Stage != "response" || recs[0].Action != "block" {
				t.Fatalf("row other %s", rows[0].Other)
			}
		})
	}
}

func TestGuardrailWindowsEveryPassthroughStream(t *testing.T) {
	for _, ac := range guardAnswers {
		for _, action := range []string{"redact", "block", "monitor"} {
			t.Run(ac.name+"/"+action, func(t *testing.T) {
				e := newEnv(t)
				_, url := newGuardUpstream(t, cardAnswer)
				e.channel("a", url, nil)
				spec := guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII, Stages: []string{"response"},
					Config: json.RawMessage(`{"window_chars":32}`)}
				switch action {
				case "redact":
					spec.Config = json.RawMessage(`{"action":"redact","window_chars":32}`)
				case "monitor":
					spec.Mode = guardrail.ModeMonitor
				}
				e.guardrails(spec)
				before := e.balance()
				resp := e.request(ac.path, map[string]string{"Authorization": "Bearer " + testKey}, ac.body(true))
				out := readAll(resp)
				checkWindowedStream(t, ac.name, action, out)
				rows := e.rows("consume")
				if len(rows) != 1 || rows[0].Quota <= 0 || e.balance() != before-rows[0].Quota {
					t.Fatalf("the stream was not billed: %+v", rows)
				}
				recs := guardOther(t, rows[0].Other)
				if len(recs) != 1 || recs[0].Stage != "response" || recs[0].Matches["card"] == 0 || strings.Contains(string(rows[0].Other), "4111") {
					t.Fatalf("row other %s", rows[0].Other)
				}
				var other map[string]any
				_ = json.Unmarshal(rows[0].Other, &other)
				if (other["guardrail_blocked"] == true) != (action == "block") || other["incomplete"] == true {
					t.Fatalf("row marks %s", rows[0].Other)
				}
			})
		}
	}
}

func checkWindowedStream(t *testing.T, surface, action, out string) {
	t.Helper()
	switch action {
	case "monitor":
		if !strings.Contains(strings.Join(streamTexts(out), ""), "4111 1111 1111 1111") {
			t.Fatalf("monitor changed the stream: %s", out)
		}
		return
	case "redact":
		text := strings.Join(streamTexts(out), "")
		if strings.Contains(out, "4111") || !strings.Contains(text, "Your card [REDACTED:card] is on file.") || !strings.HasSuffix(text, "and then some.") {
			t.Fatalf("redacted stream (text %q): %s", text, out)
		}
	case "block":
		if strings.Contains(out, "4111") || !strings.Contains(out, "guardrail_blocked") || strings.Contains(out, "[DONE]") ||
			strings.Contains(out, "response.completed") || strings.Contains(out, "stream_broken") || strings.Contains(out, "on file") {
			t.Fatalf("blocked stream %s", out)
		}
	}
	if surface == "responses" && action == "redact" && !strings.Contains(out, "response.completed") {
		t.Fatalf("no completed event: %s", out)
	}
}

// streamTexts are the text deltas of a completions or Responses stream.
func streamTexts(out string) []string {
	var texts []string
	for _, line := range strings.Split(out, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if t := gjson.Get(data, "choices.0.text"); t.Exists() {
			texts = append(texts, t.Str)
		}
		if gjson.Get(data, "type").Str == "response.output_text.delta" {
			texts = append(texts, gjson.Get(data, "delta").Str)
		}
	}
	return texts
}
