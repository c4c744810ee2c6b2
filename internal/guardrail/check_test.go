package guardrail

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func newSet(t testing.TB, plugins PluginRunner, specs ...Spec) *Set {
	t.Helper()
	for i := range specs {
		if specs[i].Name == "" {
			specs[i].Name = specs[i].Type
		}
	}
	s, err := NewSet(specs, plugins)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckBlocksRedactsAndMonitors(t *testing.T) {
	cases := []struct {
		name       string
		spec       Spec
		text       string
		wantText   string
		wantBlock  bool
		wantAction string
	}{
		{"block by default", Spec{Type: TypePII}, "card 4111111111111111", "card 4111111111111111", true, ActionBlock},
		{"redact", Spec{Type: TypePII, Config: json.RawMessage(`{"action":"redact"}`)}, "mail bob@example.org now", "mail [REDACTED:email] now", false, ActionRedact},
		{"custom replacement", Spec{Type: TypeSecrets, Config: json.RawMessage(`{"action":"redact","replacement":"***"}`)}, "AKIAIOSFODNN7EXAMPLE", "***", false, ActionRedact},
		{"monitor only records", Spec{Type: TypePII, Mode: ModeMonitor}, "ssn 123-45-6789", "ssn 123-45-6789", false, ActionMonitor},
		{"regex", Spec{Type: TypeRegex, Config: json.RawMessage(`{"patterns":["(?i)project\\s+falcon"],"action":"redact"}`)}, "about Project  Falcon.", "about [REDACTED:pattern].", false, ActionRedact},
		{"kinds narrow pii", Spec{Type: TypePII, Config: json.RawMessage(`{"kinds":["email"]}`)}, "card 4111111111111111", "card 4111111111111111", false, ""},
		{"nothing found", Spec{Type: TypePII}, "hello world", "hello world", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSet(t, nil, tc.spec)
			text := tc.text
			v := s.Check(context.Background(), Input{Stage: StageRequest, Texts: []*string{&text}})
			if text != tc.wantText {
				t.Errorf("text = %q, want %q", text, tc.wantText)
			}
			if (v.Blocked != nil) != tc.wantBlock {
				t.Errorf("blocked = %v, want %v", v.Blocked, tc.wantBlock)
			}
			if tc.wantAction == "" {
				if len(v.Records) != 0 {
					t.Errorf("records = %+v, want none", v.Records)
				}
				return
			}
			if len(v.Records) != 1 || v.Records[0].Action != tc.wantAction || v.Records[0].Stage != StageRequest {
				t.Fatalf("records = %+v, want one %s", v.Records, tc.wantAction)
			}
			b, _ := json.Marshal(v.Records)
			if strings.Contains(string(b), "4111") || strings.Contains(string(b), "bob@") || strings.Contains(string(b), "6789") {
				t.Errorf("record %s holds matched text", b)
			}
		})
	}
}

func TestScopeNeedsEveryGivenDimension(t *testing.T) {
	s := newSet(t, nil, Spec{Type: TypePII, AppliesTo: Scope{Groups: []string{"vip"}, Models: []string{"gpt-4o"}}})
	cases := []struct {
		call Call
		want bool
	}{
		{Call{Group: "vip", Model: "gpt-4o"}, true},
		{Call{Group: "vip", Model: "other"}, false},
		{Call{Group: "default", Model: "gpt-4o"}, false},
	}
	for _, tc := range cases {
		if got := s.Applies(tc.call, StageRequest); got != tc.want {
			t.Errorf("Applies(%+v) = %v, want %v", tc.call, got, tc.want)
		}
	}
	if !newSet(t, nil, Spec{Type: TypePII}).Applies(Call{Group: "any"}, StageResponse) {
		t.Error("an empty scope must apply to every call")
	}
}

func TestMaxInputTokensBlocksLongPrompts(t *testing.T) {
	s := newSet(t, nil, Spec{Type: TypeMaxTokens, Config: json.RawMessage(`{"max_tokens":10}`)})
	text := "short"
	v := s.Check(context.Background(), Input{Stage: StageRequest, Texts: []*string{&text}, Tokens: func() int { return 11 }})
	if v.Blocked == nil || v.Records[0].Matches[KindTokens] != 11 {
		t.Fatalf("verdict %+v, want a block counting 11 tokens", v)
	}
	if v := s.Check(context.Background(), Input{Stage: StageRequest, Texts: []*string{&text}, Tokens: func() int { return 10 }}); v.Blocked != nil {
		t.Fatal("10 tokens is within the limit")
	}
}

func TestNormalizeListsEveryProblem(t *testing.T) {
	s := Spec{Name: "", Type: "nope", Mode: "loud", Stages: []string{"later"}, Config: json.RawMessage(`{"action":"burn","extra":1}`)}
	_, problems := s.Normalize()
	if len(problems) < 4 {
		t.Fatalf("problems = %q, want name, type, mode, stages and config", problems)
	}
	r := Spec{Name: "r", Type: TypeRegex, Config: json.RawMessage(`{"patterns":["(a"]}`)}
	if _, p := r.Normalize(); len(p) != 1 || !strings.Contains(p[0], "patterns[0]") {
		t.Fatalf("problems = %q, want the bad pattern named", p)
	}
	m := Spec{Name: "m", Type: TypeMaxTokens, Stages: []string{"response"}, Config: json.RawMessage(`{"max_tokens":5}`)}
	if _, p := m.Normalize(); len(p) != 1 {
		t.Fatalf("problems = %q, want max_input_tokens refused at response", p)
	}
}

// fakePlugins answers with a fixed verdict or error and records the ctx.
type fakePlugins struct {
	verdict PluginVerdict
	err     error
	got     []PluginContext
	hooks   []string
}

func (f *fakePlugins) CheckText(_ context.Context, plugin, hook string, in PluginContext) (PluginVerdict, error) {
	f.got = append(f.got, in)
	f.hooks = append(f.hooks, plugin+"."+hook)
	return f.verdict, f.err
}

func TestPluginRedactionsCountUTF16Indices(t *testing.T) {
	// "😀 " is three UTF-16 units; "secret" starts at index 3.
	fp := &fakePlugins{verdict: PluginVerdict{Action: ActionRedact, Redactions: []Redaction{{Start: 3, End: 9, Replacement: "[x]"}}}}
	s := newSet(t, fp, Spec{Type: TypePlugin, Config: json.RawMessage(`{"plugin":"acme"}`)})
	text := "😀 secret é"
	v := s.Check(context.Background(), Input{Call: Call{Model: "m", Group: "g"}, Stage: StageRequest, Texts: []*string{&text}})
	if text != "😀 [x] é" {
		t.Fatalf("text = %q", text)
	}
	if v.Records[0].Matches[KindPlugin] != 1 || fp.hooks[0] != "acme.checkRequest" || fp.got[0].Model != "m" || fp.got[0].Group != "g" {
		t.Fatalf("records %+v, calls %v %+v", v.Records, fp.hooks, fp.got)
	}
}

func TestPluginRedactionsSpanJoinedTexts(t *testing.T) {
	fp := &fakePlugins{verdict: PluginVerdict{Action: ActionRedact, Redactions: []Redaction{{Start: 4, End: 7, Replacement: "#"}}}}
	s := newSet(t, fp, Spec{Type: TypePlugin, Config: json.RawMessage(`{"plugin":"acme"}`)})
	a, b := "abcd", "efgh"
	s.Check(context.Background(), Input{Stage: StageRequest, Texts: []*string{&a, &b}})
	if fp.got[0].Text != "abcd\nefgh" || a != "abcd#" || b != "gh" {
		t.Fatalf("joined %q, a=%q b=%q", fp.got[0].Text, a, b)
	}
}

func TestPluginFailureFollowsOnError(t *testing.T) {
	cases := []struct {
		config    string
		wantBlock bool
		action    string
	}{
		{`{"plugin":"acme"}`, true, ActionBlock},
		{`{"plugin":"acme","on_error":"allow"}`, false, ActionAllow},
	}
	for _, tc := range cases {
		fp := &fakePlugins{err: errors.New("boom")}
		s := newSet(t, fp, Spec{Type: TypePlugin, Config: json.RawMessage(tc.config)})
		text := "x"
		v := s.Check(context.Background(), Input{Stage: StageResponse, Texts: []*string{&text}})
		if (v.Blocked != nil) != tc.wantBlock || v.Records[0].Action != tc.action || v.Records[0].Matches["plugin_error"] != 1 {
			t.Errorf("%s: verdict %+v", tc.config, v)
		}
		if fp.hooks[0] != "acme.checkResponse" {
			t.Errorf("hook %v", fp.hooks)
		}
	}
}

func TestPluginBlockNamesTheReason(t *testing.T) {
	fp := &fakePlugins{verdict: PluginVerdict{Action: ActionBlock, Reason: "competitor named"}}
	s := newSet(t, fp, Spec{Name: "brand", Type: TypePlugin, Config: json.RawMessage(`{"plugin":"acme"}`)})
	text := "x"
	v := s.Check(context.Background(), Input{Stage: StageRequest, Texts: []*string{&text}})
	if v.Blocked == nil || !strings.Contains(v.Blocked.Message(), `"brand"`) || !strings.Contains(v.Blocked.Message(), "competitor named") {
		t.Fatalf("verdict %+v", v)
	}
}
