package taskhttp

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRenderedEventFraming feeds plugin-rendered events (any JSON object)
// to the SSE framer: each must come out as exactly one well-formed event
// whose data is the event's JSON.
func FuzzRenderedEventFraming(f *testing.F) {
	for _, seed := range []string{
		`{"type":"response.output_text.delta","delta":"hi"}`,
		`{"type":"line\nbreak","data":"x"}`,
		`{"type":"","data":"a\r\n\r\nb"}`,
		`{"data":"no type"}`,
		`{"type":7}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var ev map[string]any
		if json.Unmarshal([]byte(in), &ev) != nil || ev == nil {
			return
		}
		rec := httptest.NewRecorder()
		sw := &respStream{w: rec}
		if err := sw.event(ev); err != nil {
			return
		}
		out := rec.Body.String()
		if !strings.HasSuffix(out, "\n\n") || strings.Count(out, "\n\n") != 1 {
			t.Fatalf("frame %q is not exactly one event", out)
		}
		var data string
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n\n"), "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			default:
				t.Fatalf("frame %q has a stray line %q", out, line)
			}
		}
		var back map[string]any
		if err := json.Unmarshal([]byte(data), &back); err != nil {
			t.Fatalf("data %q does not parse back: %v", data, err)
		}
	})
}
