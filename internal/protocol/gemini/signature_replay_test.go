package gemini

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// What Gemini CLI sends back on its next turn: signatures where this
// provider puts them, and its own skip sentinel on unsigned calls.
func TestReplayedSignaturesSignTheirThinking(t *testing.T) {
	cases := []struct {
		name  string
		model string
		want  []string // kind:text:signature per IR part
	}{
		{"signature on the call after text signs the thought",
			`[{"text":"plan","thought":true},{"text":"say"},{"functionCall":{"name":"f","args":{}},"thoughtSignature":"S1"}]`,
			[]string{"thinking:plan:S1", "text:say:", "tool_call::"}},
		{"skip sentinel is no signature",
			`[{"text":"plan","thought":true},{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]`,
			[]string{"thinking:plan:", "tool_call::"}},
		{"skip sentinel alone adds no thinking",
			`[{"text":"say"},{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]`,
			[]string{"text:say:", "tool_call::"}},
		{"older answers: signature on an empty thought part",
			`[{"text":"plan","thought":true},{"text":"","thought":true,"thoughtSignature":"S2"},{"functionCall":{"name":"f","args":{}}}]`,
			[]string{"thinking:plan:S2", "tool_call::"}},
		{"signed call without thought text keeps its signature",
			`[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"S3"}]`,
			[]string{"thinking::S3", "tool_call::"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":` + tc.model + `}]}`
			req, err := Generate.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			parts := req.Messages[1].Parts
			if len(parts) != len(tc.want) {
				t.Fatalf("got %d parts %+v, want %v", len(parts), parts, tc.want)
			}
			for i, p := range parts {
				got := string(p.Kind) + ":"
				switch p.Kind {
				case ir.PartThinking:
					got += p.Thinking.Text + ":" + p.Thinking.Signature
				case ir.PartText:
					got += p.Text + ":"
				default:
					got += ":"
				}
				if got != tc.want[i] {
					t.Errorf("part %d = %q, want %q", i, got, tc.want[i])
				}
			}
		})
	}
}
