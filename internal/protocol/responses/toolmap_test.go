package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestCodexToolKindsConvertForChatChannels(t *testing.T) {
	cases := []struct {
		name      string
		tools     string
		wantNames []string
		dropped   []string
	}{
		{"custom tool becomes a one-string function", `[{"type":"custom","name":"apply_patch","description":"Patch."}]`, []string{"apply_patch"}, nil},
		{"namespace is flattened", `[{"type":"namespace","name":"mcp__fs","tools":[{"type":"function","name":"read"},{"type":"function","name":"write"}]}]`,
			[]string{"mcp__fs__read", "mcp__fs__write"}, nil},
		{"namespace ending in __ is not doubled", `[{"type":"namespace","name":"mcp__fs__","tools":[{"type":"function","name":"read"}]}]`, []string{"mcp__fs__read"}, nil},
		{"odd characters are replaced", `[{"type":"namespace","name":"my.ns","tools":[{"type":"function","name":"do it"}]}]`, []string{"my_ns__do_it"}, nil},
		{"hosted tools are dropped and named", `[{"type":"function","name":"f"},{"type":"web_search"},{"type":"tool_search","execution":"client"}]`,
			[]string{"f"}, []string{"web_search", "tool_search"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := DecodeRequest([]byte(`{"model":"m","input":"hi","tools":` + tc.tools + `}`))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range req.IR.Tools {
				names = append(names, tool.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantNames, ",") {
				t.Errorf("tools %v, want %v", names, tc.wantNames)
			}
			if strings.Join(req.DroppedTools(), ",") != strings.Join(tc.dropped, ",") {
				t.Errorf("dropped %v, want %v", req.DroppedTools(), tc.dropped)
			}
		})
	}
}

func TestLongNamespacedNamesStayWithinTheLimitAndRestore(t *testing.T) {
	tm := &ToolMap{}
	ns := "mcp__" + strings.Repeat("server", 10)
	a, b := tm.flatten(ns, "read_file"), tm.flatten(ns, "read_files")
	if len(a) > maxToolName || len(b) > maxToolName || a == b {
		t.Fatalf("flattened %q and %q", a, b)
	}
	if gotNS, name := tm.Restore(b); gotNS != ns || name != "read_files" {
		t.Errorf("restore %q = %q %q", b, gotNS, name)
	}
	if gotNS, name := tm.Restore("shell"); gotNS != "" || name != "shell" {
		t.Errorf("plain name restored as %q %q", gotNS, name)
	}
}

func TestCodexItemsFromAnEarlierTurnConvert(t *testing.T) {
	body := `{"model":"m","tools":[{"type":"custom","name":"apply_patch"},{"type":"namespace","name":"mcp__fs","tools":[{"type":"function","name":"read"}]}],"input":[
		{"role":"user","content":"go"},
		{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"think"}],"encrypted_content":"sig"},
		{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"},
		{"type":"custom_tool_call_output","call_id":"c1","output":"ok"},
		{"type":"function_call","call_id":"c2","namespace":"mcp__fs","name":"read","arguments":"{}"},
		{"type":"function_call_output","call_id":"c2","output":"data"},
		{"type":"web_search_call","id":"ws","status":"completed"}]}`
	req, err := DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	msgs := req.IR.Messages
	if len(msgs) != 5 {
		t.Fatalf("got %d messages", len(msgs))
	}
	asst := msgs[1].Parts
	if asst[0].Kind != ir.PartThinking || asst[0].Thinking.Text != "think" || asst[0].Thinking.Signature != "sig" {
		t.Errorf("reasoning part %+v", asst[0])
	}
	if c := asst[1].ToolCall; c == nil || c.Name != "apply_patch" || c.Arguments != `{"input":"*** Begin Patch\n*** End Patch"}` {
		t.Errorf("custom call %+v", asst[1].ToolCall)
	}
	if r := msgs[2].Parts[0].ToolResult; r.CallID != "c1" || r.Name != "apply_patch" || r.Content[0].Text != "ok" {
		t.Errorf("custom output %+v", r)
	}
	if c := msgs[3].Parts[0].ToolCall; c.Name != "mcp__fs__read" {
		t.Errorf("namespaced call named %q", c.Name)
	}
}

func TestCallsGoBackInTheKindTheToolWasDeclared(t *testing.T) {
	req, err := DecodeRequest([]byte(`{"model":"m","input":"hi","tools":[{"type":"custom","name":"apply_patch"},{"type":"namespace","name":"mcp__fs","tools":[{"type":"function","name":"read"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res := &ir.Response{Content: []ir.Part{
		{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "apply_patch", Arguments: `{"input":"PATCH"}`}},
		{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c2", Name: "mcp__fs__read", Arguments: `{}`}},
		{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c3", Name: "apply_patch", Arguments: `not json`}},
	}}
	out, err := EncodeResponse(res, Meta{ID: "T", CreatedAt: 1, Tools: req.Tools})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Output []map[string]any `json:"output"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"type": "custom_tool_call", "name": "apply_patch", "input": "PATCH", "call_id": "c1"},
		{"type": "function_call", "name": "read", "namespace": "mcp__fs", "call_id": "c2"},
		{"type": "custom_tool_call", "name": "apply_patch", "input": "not json", "call_id": "c3"},
	}
	for i, w := range want {
		for k, v := range w {
			if got.Output[i][k] != v {
				t.Errorf("output[%d].%s = %v, want %v", i, k, got.Output[i][k], v)
			}
		}
	}
}
