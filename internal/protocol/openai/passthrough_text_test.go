package openai

import "testing"

func TestChatStreamTextIsTheFirstChoicesDeltaContentAndReasoning(t *testing.T) {
	cases := []struct {
		name, data, text string
	}{
		{"content", `{"choices":[{"index":0,"delta":{"content":"once upon"}}]}`, "once upon"},
		{"reasoning then content", `{"choices":[{"delta":{"content":" a time","reasoning_content":"think"}}]}`, " a timethink"},
		{"escaped text is unescaped", `{"choices":[{"delta":{"content":"say \"hi\"\n"}}]}`, "say \"hi\"\n"},
		{"only the first choice counts", `{"choices":[{"delta":{"content":"one"}},{"delta":{"content":"two"}}]}`, "one"},
		{"a role-only chunk has none", `{"choices":[{"delta":{"role":"assistant"}}]}`, ""},
		{"a usage-only chunk has none", `{"choices":[],"usage":{"prompt_tokens":5}}`, ""},
		{"no choices", `{"id":"x"}`, ""},
		{"not JSON", `data`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Chat.AppendStreamText([]byte("kept:"), "", []byte(tc.data))); got != "kept:"+tc.text {
				t.Errorf("got %q, want %q after what was kept", got, "kept:"+tc.text)
			}
		})
	}
}
