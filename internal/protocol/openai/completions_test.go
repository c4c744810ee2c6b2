package openai

import "testing"

func TestCompletionsStreamPassthroughReadsTextAndRealUsageOnly(t *testing.T) {
	cases := []struct {
		name, data, text string
		usage, usageOnly bool
	}{
		{"text chunk", `{"choices":[{"index":0,"text":"once upon"}]}`, "once upon", false, false},
		{"usage-only chunk", `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}`, "", true, true},
		{"all-zero usage is no report", `{"choices":[{"text":"a"}],"usage":{"prompt_tokens":0,"completion_tokens":0}}`, "a", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Completions.AppendStreamText(nil, "", []byte(tc.data))); got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			if _, ok := Completions.SniffStreamUsage("", []byte(tc.data)); ok != tc.usage {
				t.Errorf("usage reported %v, want %v", ok, tc.usage)
			}
			if got := Completions.UsageOnlyEvent("", []byte(tc.data)); got != tc.usageOnly {
				t.Errorf("usage-only %v, want %v", got, tc.usageOnly)
			}
		})
	}
}
