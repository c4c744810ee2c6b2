package anthropic

import (
	"errors"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Claude Code sends system turns inside messages (mid-conversation
// instructions); they stay at their place in the IR for other wires.
func TestSystemTurnsInsideMessagesDecodeInPlace(t *testing.T) {
	body := `{"model":"m","max_tokens":8,"system":"top","messages":[` +
		`{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},` +
		`{"role":"system","content":[{"type":"text","text":"tools changed"},{"type":"text","text":"use grep"}]},` +
		`{"role":"system","content":"be brief"},{"role":"user","content":"go"}]}`
	req, err := Messages.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	roles := []ir.Role{ir.RoleUser, ir.RoleAssistant, ir.RoleSystem, ir.RoleSystem, ir.RoleUser}
	if len(req.Messages) != len(roles) {
		t.Fatalf("got %d messages, want %d", len(req.Messages), len(roles))
	}
	for i, r := range roles {
		if req.Messages[i].Role != r {
			t.Errorf("messages[%d] role %s, want %s", i, req.Messages[i].Role, r)
		}
	}
	if got := req.Messages[2].Parts; len(got) != 2 || got[0].Text != "tools changed" || got[1].Text != "use grep" {
		t.Errorf("system turn parts %+v", got)
	}
	if len(req.System) != 1 || req.System[0].Text != "top" {
		t.Errorf("top-level system %+v", req.System)
	}
}

// An unknown role is refused in the API's own words, which clients match.
func TestUnknownRoleIsRefusedInTheAPIsWords(t *testing.T) {
	_, err := Messages.DecodeRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"robot","content":"x"}]}`))
	var e *ir.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *ir.Error, got %v", err)
	}
	want := "messages: Unexpected role \"robot\". The Messages API accepts a top-level `system` parameter, not \"robot\" as an input message role."
	if e.Status != 400 || e.Kind != ir.KindInvalidRequest || e.Message != want || e.Param != "messages[0].role" {
		t.Errorf("got %d %s %q param %q", e.Status, e.Kind, e.Message, e.Param)
	}
}

// The API wants an assistant turn's thinking ahead of its text and calls;
// other formats may hold it later (a signature replayed on a function call).
func TestThinkingBlocksGoFirstInAnAssistantTurn(t *testing.T) {
	req := &ir.Request{Model: "m", Messages: []ir.Message{
		{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "q"}}},
		{Role: ir.RoleAssistant, Parts: []ir.Part{
			{Kind: ir.PartText, Text: "checking"},
			{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: "plan", Signature: "sig1"}},
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "f", Arguments: "{}"}},
		}},
		{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "c1", Content: []ir.Part{{Kind: ir.PartText, Text: "ok"}}}}}},
	}}
	out, err := Messages.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `"content":[{"type":"thinking","thinking":"plan","signature":"sig1"},{"type":"text","text":"checking"},{"type":"tool_use"`
	if !strings.Contains(string(out), want) {
		t.Errorf("assistant turn not ordered thinking first:\n%s", out)
	}
}

// History from another format whose last tool-calling turn has no signed
// thinking cannot be sent with thinking on: the API would refuse it.
func TestThinkingIsLeftOffWhenTheLastToolTurnIsUnsigned(t *testing.T) {
	call := ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "f", Arguments: "{}"}}
	result := ir.Message{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "c1", Content: []ir.Part{{Kind: ir.PartText, Text: "ok"}}}}}}
	signed := ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: "t", Signature: "s"}}
	cases := []struct {
		name      string
		assistant []ir.Part
		thinking  bool
	}{
		{"signed tool turn keeps thinking", []ir.Part{signed, call}, true},
		{"unsigned tool turn drops thinking", []ir.Part{{Kind: ir.PartText, Text: "x"}, call}, false},
		{"unsigned thinking counts as none", []ir.Part{{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: "t"}}, call}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := &ir.Request{Model: "m", Reasoning: &ir.Reasoning{Effort: "medium"}, Messages: []ir.Message{
				{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "q"}}},
				{Role: ir.RoleAssistant, Parts: tc.assistant}, result}}
			out, err := Messages.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(out), `"thinking":{"type":"enabled"`); got != tc.thinking {
				t.Errorf("thinking enabled = %v, want %v:\n%s", got, tc.thinking, out)
			}
		})
	}
}
