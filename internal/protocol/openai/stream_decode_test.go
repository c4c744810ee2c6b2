package openai

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// summarize renders events compactly so expected sequences read like a log.
func summarize(evs []ir.Event) []string {
	kinds := map[ir.BlockKind]string{ir.BlockText: "text", ir.BlockThinking: "thinking", ir.BlockToolCall: "tool"}
	var out []string
	for _, ev := range evs {
		var s string
		switch ev.Type {
		case ir.EventStart:
			s = "start " + ev.ID
		case ir.EventBlockStart:
			s = fmt.Sprintf("open %d %s", ev.Index, kinds[ev.Block])
			if ev.Block == ir.BlockToolCall {
				s += " " + ev.ToolName
			}
		case ir.EventDelta:
			s = fmt.Sprintf("delta %d %q", ev.Index, ev.Text+ev.ArgumentsDelta)
		case ir.EventBlockStop:
			s = fmt.Sprintf("close %d", ev.Index)
		case ir.EventStop:
			s = "stop " + string(ev.StopReason)
		case ir.EventUsage:
			s = fmt.Sprintf("usage %d/%d", ev.Usage.InputTokens, ev.Usage.OutputTokens)
		case ir.EventDone:
			s = "done"
		}
		out = append(out, s)
	}
	return out
}

func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func toChunks(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestStreamDecoderSequences(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []string
	}{
		{"content then [DONE] without finish_reason ends as a normal stop",
			[]string{chunk(`{"role":"assistant","content":"Hi"}`, ""), "[DONE]"},
			[]string{"start c1", "open 0 text", `delta 0 "Hi"`, "close 0", "stop end", "done"}},
		{"text then tool call closes the text block first",
			[]string{chunk(`{"content":"Let me look."}`, ""),
				chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"find","arguments":"{}"}}]}`, ""),
				chunk(`{}`, "tool_calls"), "[DONE]"},
			[]string{"start c1", "open 0 text", `delta 0 "Let me look."`, "close 0", "open 1 tool find", `delta 1 "{}"`, "close 1", "stop tool_use", "done"}},
		{"calls without index but with new ids are separate calls",
			[]string{chunk(`{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}}]}`, ""),
				chunk(`{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}`, "stop")},
			[]string{"start c1", "open 0 tool f", `delta 0 "{\"x\":1}"`, "close 0", "open 1 tool g", `delta 1 "{}"`, "close 1", "stop tool_use", "done"}},
		{"same index with a new id starts a new call",
			[]string{chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}`, "tool_calls")},
			[]string{"start c1", "open 0 tool f", `delta 0 "{}"`, "close 0", "open 1 tool g", `delta 1 "{}"`, "close 1", "stop tool_use", "done"}},
		{"usage-only chunk after finish",
			[]string{chunk(`{"content":"a"}`, "length"), `{"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}`, "[DONE]"},
			[]string{"start c1", "open 0 text", `delta 0 "a"`, "close 0", "stop max_tokens", "usage 3/1", "done"}},
		{"usage with choices null",
			[]string{chunk(`{"content":"a"}`, "stop"), `{"id":"c1","choices":null,"usage":{"prompt_tokens":3,"completion_tokens":1}}`},
			[]string{"start c1", "open 0 text", `delta 0 "a"`, "close 0", "stop end", "usage 3/1", "done"}},
		{"content after finish and chunks after DONE are ignored",
			[]string{chunk(`{"content":"a"}`, "stop"), chunk(`{"content":"late"}`, ""), "[DONE]", chunk(`{"content":"after"}`, "")},
			[]string{"start c1", "open 0 text", `delta 0 "a"`, "close 0", "stop end", "done"}},
		{"other choices are ignored",
			[]string{`{"id":"c1","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`, chunk(`{}`, "stop")},
			[]string{"start c1", "open 0 text", `delta 0 "mine"`, "close 0", "stop end", "done"}},
		{"a leading chunk without choices does not start the stream",
			[]string{`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0}]}`, chunk(`{"content":"a"}`, "stop")},
			[]string{"start c1", "open 0 text", `delta 0 "a"`, "close 0", "stop end", "done"}},
		{"blank keep-alive data is ignored",
			[]string{"", "  ", chunk(`{"content":"a"}`, "content_filter")},
			[]string{"start c1", "open 0 text", `delta 0 "a"`, "close 0", "stop content_filter", "done"}},
		{"an empty answer with a finish reason is whole",
			[]string{chunk(`{"role":"assistant","content":""}`, ""), chunk(`{}`, "stop"), "[DONE]"},
			[]string{"start c1", "stop end", "done"}},
		{"reasoning field and refusal",
			[]string{chunk(`{"reasoning":"think"}`, ""), chunk(`{"refusal":"no"}`, "stop")},
			[]string{"start c1", "open 0 thinking", `delta 0 "think"`, "close 0", "open 1 text", `delta 1 "no"`, "close 1", "stop end", "done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := decodeAll(toChunks(tt.chunks...))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if got := summarize(evs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestStreamDecoderFailures(t *testing.T) {
	tests := []struct {
		name    string
		chunks  []string
		status  int
		message string
	}{
		{"nothing at all", nil, 502, "without sending anything"},
		{"only the DONE sentinel", []string{"[DONE]"}, 502, "without sending anything"},
		{"a role chunk and nothing more", []string{chunk(`{"role":"assistant"}`, "")}, 502, "before any answer"},
		{"content cut off with neither finish_reason nor [DONE]", []string{chunk(`{"role":"assistant","content":"Hi"}`, "")}, 502, "before the answer was complete"},
		{"a chunk that is not JSON", []string{"{not json"}, 502, "not JSON"},
		{"an error object mid-stream", []string{chunk(`{"content":"a"}`, ""), `{"error":{"message":"The server had an error","type":"server_error"}}`}, 502, "The server had an error"},
		{"an error object with an HTTP code", []string{`{"error":{"message":"Rate limit reached","code":429}}`}, 429, "Rate limit reached"},
		{"interleaved parallel call arguments", []string{
			chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}`, "")}, 502, "interleaved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeAll(toChunks(tt.chunks...))
			var e *ir.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *ir.Error", err)
			}
			if e.Status != tt.status || !strings.Contains(e.Message, tt.message) {
				t.Errorf("got %d %q, want %d containing %q", e.Status, e.Message, tt.status, tt.message)
			}
		})
	}
}

func TestStreamDecoderStopsOnEmitError(t *testing.T) {
	boom := errors.New("client gone")
	d := Chat.NewStreamDecoder()
	err := d.Decode("", []byte(chunk(`{"content":"a"}`, "")), func(ir.Event) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the emit error", err)
	}
}

func TestStreamDecoderBoundsToolCalls(t *testing.T) {
	d := Chat.NewStreamDecoder()
	emit := func(ir.Event) error { return nil }
	var err error
	for i := 0; i <= maxToolCalls && err == nil; i++ {
		err = d.Decode("", []byte(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"c%d","function":{"name":"f"}}]}`, i, i), "")), emit)
	}
	if err == nil {
		t.Fatal("no error after more than maxToolCalls calls")
	}
}
