package relay

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// fixedGuards serves one set of guardrails.
type fixedGuards struct{ set *guardrail.Set }

func (f fixedGuards) Set() *guardrail.Set { return f.set }

func (e *env) guardrails(specs ...guardrail.Spec) {
	e.t.Helper()
	for i := range specs {
		if specs[i].Name == "" {
			specs[i].Name = specs[i].Type
		}
	}
	set, err := guardrail.NewSet(specs, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.relay.Guardrails = fixedGuards{set}
}

// dialect is one client surface: how a prompt is sent and how its error
// names the code.
type dialect struct {
	name   string
	path   func(stream bool) string
	header map[string]string
	body   func(prompt string, stream bool) string
	// code finds the error code (or type) the dialect carries.
	code func(body map[string]any) string
}

var dialects = []dialect{
	{name: "openai", path: func(bool) string { return "/v1/chat/completions" }, header: map[string]string{"Authorization": "Bearer " + testKey},
		body: func(p string, s bool) string {
			return `{"model":"gpt-4o-mini","stream":` + jsonBool(s) + `,"messages":[{"role":"user","content":` + jsonString(p) + `}]}`
		},
		code: func(b map[string]any) string { return str(b, "error", "code") }},
	{name: "messages", path: func(bool) string { return "/v1/messages" }, header: map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01"},
		body: func(p string, s bool) string {
			return `{"model":"gpt-4o-mini","max_tokens":100,"stream":` + jsonBool(s) + `,"messages":[{"role":"user","content":` + jsonString(p) + `}]}`
		},
		code: func(b map[string]any) string { return str(b, "error", "type") }},
	{name: "alt-native", path: func(s bool) string {
		if s {
			return "/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse"
		}
		return "/v1beta/models/gpt-4o-mini:generateContent"
	}, header: map[string]string{"x-goog-api-key": testKey},
		body: func(p string, _ bool) string {
			return `{"contents":[{"role":"user","parts":[{"text":` + jsonString(p) + `}]}]}`
		},
		code: func(b map[string]any) string { return str(b, "error", "status") }},
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
func jsonBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		obj, _ := cur.(map[string]any)
		cur = obj[p]
	}
	s, _ := cur.(string)
	return s
}

func guardOther(t *testing.T, raw json.RawMessage) []guardrail.Record {
	t.Helper()
	var o struct {
		Guardrails []guardrail.Record `json:"guardrails"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	return o.Guardrails
}

const cardPrompt = "my card is 4111 1111 1111 1111, is it valid?"

func TestGuardrailBlockedRequestCostsNothingAndReachesNoUpstream(t *testing.T) {
	wantCode := map[string]string{"openai": "guardrail_blocked", "messages": "invalid_request_error", "alt-native": "INVALID_ARGUMENT"}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			e := newEnv(t)
			f := &fakeOpenAI{}
			e.channel("a", newFake(t, f).URL, nil)
			e.guardrails(guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII})
			before := e.balance()
			resp := e.request(d.path(false), d.header, d.body(cardPrompt, false))
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var body map[string]any
			_ = json.Unmarshal(raw, &body)
			if resp.StatusCode != 400 || d.code(body) != wantCode[d.name] || !strings.Contains(string(raw), `no-cards`) {
				t.Fatalf("status %d body %s", resp.StatusCode, raw)
			}
			if strings.Contains(string(raw), "4111") {
				t.Fatalf("the refusal echoes the card: %s", raw)
			}
			if f.calls() != 0 {
				t.Fatalf("the upstream saw %d calls", f.calls())
			}
			if got := e.balance(); got != before {
				t.Fatalf("balance moved %d → %d", before, got)
			}
			rows := e.rows("error")
			if len(rows) != 1 || rows[0].Quota != 0 {
				t.Fatalf("error rows %+v", rows)
			}
			recs := guardOther(t, rows[0].Other)
			if len(recs) != 1 || recs[0].Action != "block" || recs[0].Matches["card"] != 1 || strings.Contains(string(rows[0].Other), "4111") {
				t.Fatalf("row other %s", rows[0].Other)
			}
			if kinds, _ := e.ledgerKinds(); kinds["reserve"]+kinds["settle"]+kinds["refund"] != 0 {
				t.Fatalf("ledger %v", kinds)
			}
		})
	}
}

func TestGuardrailRedactReachesTheUpstreamRedacted(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			e := newEnv(t)
			f := &fakeOpenAI{}
			e.channel("a", newFake(t, f).URL, nil)
			e.guardrails(guardrail.Spec{Type: guardrail.TypePII, Config: json.RawMessage(`{"action":"redact"}`)})
			resp := e.request(d.path(false), d.header, d.body(cardPrompt+" mail me at bob@example.org", false))
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || f.calls() != 1 {
				t.Fatalf("status %d, calls %d", resp.StatusCode, f.calls())
			}
			sent, _ := json.Marshal(f.last()["messages"])
			if strings.Contains(string(sent), "4111") || strings.Contains(string(sent), "bob@") ||
				!strings.Contains(string(sent), "[REDACTED:card]") || !strings.Contains(string(sent), "[REDACTED:email]") {
				t.Fatalf("upstream got %s", sent)
			}
			rows := e.rows("consume")
			if len(rows) != 1 {
				t.Fatalf("consume rows %d", len(rows))
			}
			if recs := guardOther(t, rows[0].Other); len(recs) != 1 || recs[0].Action != "redact" || recs[0].Matches["email"] != 1 {
				t.Fatalf("row other %s", rows[0].Other)
			}
		})
	}
}

func TestGuardrailMonitorOnlyRecords(t *testing.T) {
	e := newEnv(t)
	f := &fakeOpenAI{text: "your card 4111 1111 1111 1111 is fine"}
	e.channel("a", newFake(t, f).URL, nil)
	e.guardrails(guardrail.Spec{Type: guardrail.TypePII, Mode: guardrail.ModeMonitor})
	d := dialects[0]
	resp := e.request(d.path(false), d.header, d.body(cardPrompt, false))
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), "4111 1111 1111 1111") {
		t.Fatalf("status %d body %s", resp.StatusCode, raw)
	}
	sent, _ := json.Marshal(f.last()["messages"])
	if !strings.Contains(string(sent), "4111 1111 1111 1111") {
		t.Fatalf("monitor changed the request: %s", sent)
	}
	rows := e.rows("consume")
	recs := guardOther(t, rows[0].Other)
	if len(recs) != 2 || recs[0].Stage != "request" || recs[1].Stage != "response" || recs[0].Action != "monitor" || recs[1].Action != "monitor" {
		t.Fatalf("row other %s", rows[0].Other)
	}
}

func TestGuardrailBlockedRegularAnswerIsBilled(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			e := newEnv(t)
			f := &fakeOpenAI{text: "the key is AKIAIOSFODNN7EXAMPLE"}
			e.channel("a", newFake(t, f).URL, nil)
			e.guardrails(guardrail.Spec{Name: "keys", Type: guardrail.TypeSecrets, Stages: []string{"response"}})
			before := e.balance()
			resp := e.request(d.path(false), d.header, d.body("hello", false))
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(string(raw), "keys") || strings.Contains(string(raw), "AKIA") {
				t.Fatalf("status %d body %s", resp.StatusCode, raw)
			}
			rows := e.rows("consume")
			if len(rows) != 1 || rows[0].Quota <= 0 || e.balance() != before-rows[0].Quota {
				t.Fatalf("consume rows %+v, balance %d → %d", rows, before, e.balance())
			}
		})
	}
}

func TestGuardrailCardSplitAcrossStreamChunksNeverReachesTheClient(t *testing.T) {
	answer := "Sure. " + strings.Repeat("Some filler text here. ", 20) + "Your card 4111 1111 1111 1111 is on file. " + strings.Repeat("More words follow. ", 20)
	for _, d := range dialects {
		for _, action := range []string{"redact", "block"} {
			t.Run(d.name+"/"+action, func(t *testing.T) {
				e := newEnv(t)
				// The fake streams word by word: the card arrives in four chunks.
				f := &fakeOpenAI{text: answer}
				e.channel("a", newFake(t, f).URL, nil)
				e.guardrails(guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII, Stages: []string{"response"},
					Config: json.RawMessage(`{"action":"` + action + `","window_chars":64}`)})
				resp := e.request(d.path(true), d.header, d.body("hi", true))
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				out := string(raw)
				if strings.Contains(out, "4111") || strings.Contains(out, "1111 1111") {
					t.Fatalf("the card reached the client: %s", out)
				}
				switch action {
				case "redact":
					if !strings.Contains(out, "[REDACTED:card]") || !strings.Contains(out, "More words") {
						t.Fatalf("redacted stream %s", out)
					}
				case "block":
					if !strings.Contains(out, "guardrail_blocked") || !strings.Contains(out, "no-cards") || strings.Contains(out, "[DONE]") || strings.Contains(out, "on file") {
						t.Fatalf("blocked stream %s", out)
					}
				}
				rows := e.rows("consume")
				if len(rows) != 1 || rows[0].Quota <= 0 {
					t.Fatalf("the stream was not billed: %+v", rows)
				}
				if recs := guardOther(t, rows[0].Other); len(recs) != 1 || recs[0].Stage != "response" || recs[0].Matches["card"] != 1 {
					t.Fatalf("row other %s", rows[0].Other)
				}
			})
		}
	}
}
