package relay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

func TestGuardrailOnBatchLines(t *testing.T) {
	tests := []struct {
		name     string
		stage    string
		prompt   string
		answer   string
		wantOK   bool
		wantSent int
	}{
		{"a line blocked before the upstream is free", "request", cardPrompt, "fine", false, 0},
		{"a line whose answer is blocked is billed", "response", "hi", "card 4111 1111 1111 1111", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			f := &fakeOpenAI{text: tc.answer}
			e.channel("up", newFake(t, f).URL, nil)
			e.guardrails(guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII, Stages: []string{tc.stage}})
			res := e.relay.RunLine(context.Background(), e.principal(), "/v1/chat/completions",
				[]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":`+jsonString(tc.prompt)+`}]}`), time.Time{}, nil)
			if res.Status != 400 || gjson.GetBytes(res.Body, "error.code").Str != "guardrail_blocked" || strings.Contains(string(res.Body), "4111") {
				t.Fatalf("line answered %d %s", res.Status, res.Body)
			}
			if res.OK != tc.wantOK || (res.Quota > 0) != tc.wantOK || f.calls() != tc.wantSent {
				t.Fatalf("line OK %v quota %d, upstream calls %d", res.OK, res.Quota, f.calls())
			}
			if tc.stage == "request" && res.Reserved != 0 {
				t.Fatalf("a blocked line took %d from its batch's hold", res.Reserved)
			}
		})
	}
}
