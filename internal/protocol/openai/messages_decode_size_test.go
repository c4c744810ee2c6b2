package openai

import (
	"fmt"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// conversation is a chat body of n alternating user and assistant turns
// after a system prompt.
func conversation(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"bench-model","messages":[{"role":"system","content":"Be brief."}`)
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `,{"role":%q,"content":"turn %d"}`, role, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkDecodeChatConversation(b *testing.B) {
	body := conversation(20)
	b.ReportAllocs()
	for b.Loop() {
		req, err := decodeRequest(body)
		if err != nil || len(req.Messages) != 20 {
			b.Fatalf("decoded %d messages, %v", len(req.Messages), err)
		}
	}
}

func TestMessagesDecodeInOrderWithTheSystemPromptHoisted(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		roles []ir.Role
	}{
		{"only a system prompt", `{"model":"m","messages":[{"role":"system","content":"s"}]}`, nil},
		{"one user turn", `{"model":"m","messages":[{"role":"user","content":"u"}]}`, []ir.Role{ir.RoleUser}},
		{"a conversation", string(conversation(5)), []ir.Role{ir.RoleUser, ir.RoleAssistant, ir.RoleUser, ir.RoleAssistant, ir.RoleUser}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decodeRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.roles == nil && req.Messages != nil {
				t.Fatalf("messages %+v, want none (nil)", req.Messages)
			}
			if len(req.Messages) != len(tc.roles) {
				t.Fatalf("%d messages, want %d", len(req.Messages), len(tc.roles))
			}
			for i, m := range req.Messages {
				if m.Role != tc.roles[i] {
					t.Fatalf("message %d is %s, want %s", i, m.Role, tc.roles[i])
				}
			}
		})
	}
}
