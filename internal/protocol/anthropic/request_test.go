package anthropic

import (
	"errors"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

const okMsgs = `"messages":[{"role":"user","content":"hi"}]`

func TestDecodeRequestRejectsBadInputNamingTheField(t *testing.T) {
	tests := []struct {
		name, body, param string
	}{
		{"malformed JSON", `{"model":`, ""},
		{"array body", `[]`, ""},
		{"missing model", `{"max_tokens":1,` + okMsgs + `}`, "model"},
		{"model not a string", `{"model":3,"max_tokens":1,` + okMsgs + `}`, "model"},
		{"missing max_tokens", `{"model":"m",` + okMsgs + `}`, "max_tokens"},
		{"max_tokens zero", `{"model":"m","max_tokens":0,` + okMsgs + `}`, "max_tokens"},
		{"max_tokens fractional", `{"model":"m","max_tokens":1.5,` + okMsgs + `}`, "max_tokens"},
		{"max_tokens string", `{"model":"m","max_tokens":"10",` + okMsgs + `}`, "max_tokens"},
		{"temperature above one", `{"model":"m","max_tokens":1,"temperature":1.2,` + okMsgs + `}`, "temperature"},
		{"temperature negative", `{"model":"m","max_tokens":1,"temperature":-0.1,` + okMsgs + `}`, "temperature"},
		{"top_k fractional", `{"model":"m","max_tokens":1,"top_k":2.5,` + okMsgs + `}`, "top_k"},
		{"stream not bool", `{"model":"m","max_tokens":1,"stream":"yes",` + okMsgs + `}`, "stream"},
		{"stop_sequences not strings", `{"model":"m","max_tokens":1,"stop_sequences":[1],` + okMsgs + `}`, "stop_sequences[0]"},
		{"missing messages", `{"model":"m","max_tokens":1}`, "messages"},
		{"empty messages", `{"model":"m","max_tokens":1,"messages":[]}`, "messages"},
		{"image in a system turn", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"},{"role":"system","content":[{"type":"image"}]}]}`, "messages[1].content[0].type"},
		{"system turn content number", `{"model":"m","max_tokens":1,"messages":[{"role":"system","content":1}]}`, "messages[0].content"},
		{"content number", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":5}]}`, "messages[0].content"},
		{"unknown block", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"video"}]}]}`, "messages[0].content[0].type"},
		{"text without text", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text"},
		{"image bad source", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file"}}]}]}`, "messages[0].content[0].source.type"},
		{"tool_use in user turn", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}]}`, "messages[0].content[0].type"},
		{"tool_result in assistant turn", `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"a"}]}]}`, "messages[0].content[0].type"},
		{"tool_use input not object", `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":[1]}]}]}`, "messages[0].content[0].input"},
		{"tool_result without id", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"system number", `{"model":"m","max_tokens":1,"system":1,` + okMsgs + `}`, "system"},
		{"system image block", `{"model":"m","max_tokens":1,"system":[{"type":"image"}],` + okMsgs + `}`, "system[0].type"},
		{"tool without schema", `{"model":"m","max_tokens":1,"tools":[{"name":"f"}],` + okMsgs + `}`, "tools[0].input_schema"},
		{"tool without name", `{"model":"m","max_tokens":1,"tools":[{"input_schema":{}}],` + okMsgs + `}`, "tools[0].name"},
		{"tool_choice bad type", `{"model":"m","max_tokens":1,"tool_choice":{"type":"maybe"},` + okMsgs + `}`, "tool_choice.type"},
		{"tool_choice tool without name", `{"model":"m","max_tokens":1,"tool_choice":{"type":"tool"},` + okMsgs + `}`, "tool_choice.name"},
		{"thinking without budget", `{"model":"m","max_tokens":1,"thinking":{"type":"enabled"},` + okMsgs + `}`, "thinking.budget_tokens"},
		{"thinking bad type", `{"model":"m","max_tokens":1,"thinking":{"type":"on"},` + okMsgs + `}`, "thinking.type"},
		{"metadata user_id number", `{"model":"m","max_tokens":1,"metadata":{"user_id":1},` + okMsgs + `}`, "metadata.user_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Messages.DecodeRequest([]byte(tt.body))
			var e *ir.Error
			if !errors.As(err, &e) {
				t.Fatalf("want *ir.Error, got %v", err)
			}
			if e.Status != 400 || e.Kind != ir.KindInvalidRequest || e.Param != tt.param {
				t.Errorf("got status %d kind %s param %q (%s), want 400 invalid_request_error param %q",
					e.Status, e.Kind, e.Param, e.Message, tt.param)
			}
			if tt.param != "" && !strings.Contains(e.Message, tt.param) {
				t.Errorf("message %q does not name %q", e.Message, tt.param)
			}
		})
	}
}

func TestDecodeRequestMapsOptions(t *testing.T) {
	tests := []struct {
		name  string
		extra string
		check func(*ir.Request) bool
	}{
		{"tool_choice auto", `"tool_choice":{"type":"auto"}`, func(r *ir.Request) bool { return r.ToolChoice.Mode == ir.ToolChoiceAuto && r.ParallelToolCalls == nil }},
		{"tool_choice none", `"tool_choice":{"type":"none"}`, func(r *ir.Request) bool { return r.ToolChoice.Mode == ir.ToolChoiceNone }},
		{"tool_choice tool pins name", `"tool_choice":{"type":"tool","name":"f"}`, func(r *ir.Request) bool { return r.ToolChoice.Mode == ir.ToolChoiceTool && r.ToolChoice.Name == "f" }},
		{"thinking disabled", `"thinking":{"type":"disabled"}`, func(r *ir.Request) bool { return r.Reasoning.Disabled }},
		{"adaptive thinking defaults to medium effort", `"thinking":{"type":"adaptive"}`, func(r *ir.Request) bool { return r.Reasoning.Effort == "medium" }},
		{"integral float max_tokens accepted", `"top_k":5.0`, func(r *ir.Request) bool { return *r.TopK == 5 }},
		{"legacy output_format", `"output_format":{"type":"json_schema","schema":{"type":"object"}}`, func(r *ir.Request) bool { return r.ResponseFormat.Type == "json_schema" }},
		{"unknown fields ignored", `"service_tier":"auto","container":"x"`, func(r *ir.Request) bool { return r.Model == "m" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := Messages.DecodeRequest([]byte(`{"model":"m","max_tokens":10,` + tt.extra + `,` + okMsgs + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(req) {
				t.Errorf("unexpected mapping: %+v", req)
			}
		})
	}
}

func TestDecodeRequestPlacesToolResultsBeforeTheTurnsOtherContent(t *testing.T) {
	body := `{"model":"m","max_tokens":10,"messages":[
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"g","input":{}}]},
		{"role":"user","content":[{"type":"text","text":"see"},{"type":"tool_result","tool_use_id":"t2"},{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`
	req, err := Messages.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	roles := []ir.Role{}
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
	}
	want := []ir.Role{ir.RoleAssistant, ir.RoleTool, ir.RoleTool, ir.RoleUser}
	if len(roles) != len(want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	for i := range want {
		if roles[i] != want[i] {
			t.Fatalf("roles %v, want %v", roles, want)
		}
	}
	if r := req.Messages[1].Parts[0].ToolResult; r.CallID != "t2" || r.Name != "g" {
		t.Errorf("first result %+v, want call t2 named g", r)
	}
}

func intp(n int) *int { return &n }

func TestEncodeRequestRefusesWhatItCannotExpress(t *testing.T) {
	user := ir.Message{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi"}}}
	tests := []struct {
		name  string
		req   ir.Request
		param string
	}{
		{"several choices", ir.Request{Model: "m", N: intp(2), Messages: []ir.Message{user}}, "n"},
		{"max_tokens zero", ir.Request{Model: "m", MaxTokens: intp(0), Messages: []ir.Message{user}}, "max_tokens"},
		{"arguments not an object", ir.Request{Model: "m", Messages: []ir.Message{user, {Role: ir.RoleAssistant, Parts: []ir.Part{
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c", Name: "f", Arguments: "[1,"}}}}}}, "messages[1].content[0].arguments"},
		{"tool message without result", ir.Request{Model: "m", Messages: []ir.Message{user, {Role: ir.RoleTool, Parts: []ir.Part{
			{Kind: ir.PartText, Text: "orphan"}}}}}, "messages[1].content[0]"},
		{"inline image without type", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
			{Kind: ir.PartImage, Media: &ir.Media{Data: "AAAA"}}}}}}, "messages[0].content[0].mime_type"},
		{"percent-encoded data URL", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
			{Kind: ir.PartImage, Media: &ir.Media{URL: "data:image/png,%89PNG"}}}}}}, "messages[0].content[0].url"},
		{"only system messages", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartText, Text: "s"}}}}}, "messages"},
		{"image in system", ir.Request{Model: "m", System: []ir.Part{{Kind: ir.PartImage}}, Messages: []ir.Message{user}}, "system[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Messages.EncodeRequest(&tt.req)
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Param != tt.param {
				t.Fatalf("got %v (param %q), want a 400 naming %q", err, paramOf(err), tt.param)
			}
		})
	}
}

func paramOf(err error) string {
	var e *ir.Error
	if errors.As(err, &e) {
		return e.Param
	}
	return ""
}

func TestEncodeRequestThinkingFitsTheRequest(t *testing.T) {
	user := []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi"}}}}
	tools := []ir.Tool{{Name: "f"}}
	tests := []struct {
		name                  string
		req                   ir.Request
		wantThinking          bool
		wantMax, wantBudget   int
		wantTemperatureKept   bool
		wantTopPKept          bool
		wantParallelDisabling bool
	}{
		{name: "low effort keeps room for the answer", req: ir.Request{MaxTokens: intp(500), Reasoning: &ir.Reasoning{Effort: "low"}},
			wantThinking: true, wantMax: 1524, wantBudget: 1024},
		{name: "budget below the minimum is raised", req: ir.Request{MaxTokens: intp(8000), Reasoning: &ir.Reasoning{BudgetTokens: 100}},
			wantThinking: true, wantMax: 8000, wantBudget: 1024},
		{name: "dynamic budget means medium", req: ir.Request{Reasoning: &ir.Reasoning{BudgetTokens: -1}},
			wantThinking: true, wantMax: 4096 + 4096, wantBudget: 4096},
		{name: "disabled sends nothing", req: ir.Request{Reasoning: &ir.Reasoning{Disabled: true, Effort: "high"}}, wantMax: 4096},
		{name: "effort none sends nothing", req: ir.Request{Reasoning: &ir.Reasoning{Effort: "none"}}, wantMax: 4096},
		{name: "forced tool use wins over thinking", req: ir.Request{Tools: tools, ToolChoice: &ir.ToolChoice{Mode: ir.ToolChoiceRequired},
			Reasoning: &ir.Reasoning{Effort: "high"}}, wantMax: 4096},
		{name: "temperature of one survives thinking", req: ir.Request{MaxTokens: intp(20000), Temperature: ptrf(1), TopP: nil,
			Reasoning: &ir.Reasoning{Effort: "medium"}}, wantThinking: true, wantMax: 20000, wantBudget: 4096, wantTemperatureKept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Model, tt.req.Messages = "m", user
			out, err := Messages.EncodeRequest(&tt.req)
			if err != nil {
				t.Fatal(err)
			}
			s := string(out)
			if got := strings.Contains(s, `"thinking":{"type":"enabled"`); got != tt.wantThinking {
				t.Fatalf("thinking present=%v, want %v: %s", got, tt.wantThinking, s)
			}
			if !strings.Contains(s, `"max_tokens":`+itoa(tt.wantMax)) {
				t.Errorf("want max_tokens %d: %s", tt.wantMax, s)
			}
			if tt.wantThinking && !strings.Contains(s, `"budget_tokens":`+itoa(tt.wantBudget)) {
				t.Errorf("want budget %d: %s", tt.wantBudget, s)
			}
			if got := strings.Contains(s, `"temperature"`); got != tt.wantTemperatureKept {
				t.Errorf("temperature present=%v: %s", got, s)
			}
		})
	}
}

func ptrf(f float64) *float64 { return &f }

func TestEncodeRequestMergesTurnsIntoAlternation(t *testing.T) {
	txt := func(s string) []ir.Part { return []ir.Part{{Kind: ir.PartText, Text: s}} }
	req := &ir.Request{Model: "m", Messages: []ir.Message{
		{Role: ir.RoleUser, Parts: txt("a")},
		{Role: ir.RoleUser, Parts: txt("b")},
		{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartText, Text: ""}}},
		{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "f", Arguments: "{}"}}}},
		{Role: ir.RoleUser, Parts: txt("interjection")},
		{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "c1"}}}},
	}}
	out, err := Messages.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1"},{"type":"text","text":"interjection"}]}]`
	if !strings.Contains(string(out), want) {
		t.Errorf("got %s\nwant it to contain %s", out, want)
	}
}

func TestEncodeRequestRestoresServerToolsVerbatim(t *testing.T) {
	req, err := Messages.DecodeRequest([]byte(`{"model":"m","max_tokens":5,"tools":[{"type":"bash_20250124","name":"bash"}],` + okMsgs + `}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Messages.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"tools":[{"type":"bash_20250124","name":"bash"}]`) {
		t.Errorf("server tool not restored: %s", out)
	}
}

func TestSanitizeToolIDKeepsValidIDsAndMapsOthersDeterministically(t *testing.T) {
	tests := map[string]string{
		"toolu_01A-b": "toolu_01A-b",
		"call:1.x":    "call_1_x",
		"函数":          "______",
	}
	for in, want := range tests {
		if got := sanitizeToolID(in); got != want {
			t.Errorf("sanitizeToolID(%q) = %q, want %q", in, got, want)
		}
	}
}
