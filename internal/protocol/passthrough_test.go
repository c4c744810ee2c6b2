package protocol_test

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
)

func TestPassthroughBodyEditsOnlyWhatTheFormatNeeds(t *testing.T) {
	cases := []struct {
		name   string
		codec  protocol.Codec
		raw    string
		stream bool
		want   string
	}{
		{"openai model rewritten", openai.Chat, `{"model":"a","messages":[]}`, false, `{"model":"b","messages":[]}`},
		{"openai stream asks for usage", openai.Chat, `{"model":"b","stream":true}`, true, `{"model":"b","stream":true,"stream_options":{"include_usage":true}}`},
		{"openai stream that asked keeps its body", openai.Chat, `{"model":"b","stream":true,"stream_options":{"include_usage":true}}`, true, `{"model":"b","stream":true,"stream_options":{"include_usage":true}}`},
		{"messages-native model rewritten, no usage request", anthropic.Messages, `{"model":"a","stream":true}`, true, `{"model":"b","stream":true}`},
		{"alternate-native untouched: the model is in the URL", gemini.Generate, `{"contents":[]}`, true, `{"contents":[]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			got, err := tc.codec.PassthroughBody(raw, "b", tc.stream)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if string(raw) != tc.raw {
				t.Errorf("the client's body was modified: %s", raw)
			}
		})
	}
}

func TestPassthroughBodyRefusesANonObject(t *testing.T) {
	for _, c := range []protocol.Codec{openai.Chat, anthropic.Messages} {
		if _, err := c.PassthroughBody([]byte(`[1]`), "b", true); err == nil {
			t.Errorf("%s: no error for a JSON array body", c.Format())
		}
	}
}

func TestStreamPassthroughReadsTextAndUsageOnlyEvents(t *testing.T) {
	cases := []struct {
		name      string
		sp        protocol.StreamPassthrough
		event     string
		data      string
		text      string
		usageOnly bool
	}{
		{"openai content", openai.Chat, "", `{"choices":[{"index":0,"delta":{"content":"hi"}}]}`, "hi", false},
		{"openai reasoning", openai.Chat, "", `{"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}`, "hm", false},
		{"openai usage chunk", openai.Chat, "", `{"choices":[],"usage":{"prompt_tokens":1}}`, "", true},
		{"openai finish chunk with usage is not usage-only", openai.Chat, "", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`, "", false},
		{"messages text delta", anthropic.Messages, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, "hi", false},
		{"messages tool input", anthropic.Messages, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\""}}`, `{"a"`, false},
		{"messages other events carry no text", anthropic.Messages, "message_delta", `{"type":"message_delta","delta":{"text":"x"}}`, "", false},
		{"alternate every part", gemini.Generate, "", `{"candidates":[{"content":{"parts":[{"text":"a","thought":true},{"text":"b"}]}}]}`, "ab", false},
		{"responses text delta", responses.Events, "response.output_text.delta", `{"type":"response.output_text.delta","delta":"hi"}`, "hi", false},
		{"responses unnamed event by type", responses.Events, "", `{"type":"response.function_call_arguments.delta","delta":"{}"}`, "{}", false},
		{"responses other events carry no text", responses.Events, "response.created", `{"type":"response.created","delta":"x"}`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.sp.AppendStreamText(nil, tc.event, []byte(tc.data))); got != tc.text {
				t.Errorf("text = %q, want %q", got, tc.text)
			}
			if got := tc.sp.UsageOnlyEvent(tc.event, []byte(tc.data)); got != tc.usageOnly {
				t.Errorf("usage-only = %v, want %v", got, tc.usageOnly)
			}
		})
	}
}
