package loadtest

import (
	"errors"
	"strings"
	"testing"
)

func TestReadSSE(t *testing.T) {
	tests := []struct {
		name    string
		stream  string
		want    []string
		wantErr error
	}{
		{name: "passes each data payload and stops at DONE",
			stream: "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\ndata: after\n\n", want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "skips comments, event and id fields", stream: ": ping\nevent: x\nid: 3\ndata: p\n\ndata: [DONE]\n", want: []string{"p"}},
		{name: "accepts CRLF line ends and no space after the colon", stream: "data:p\r\n\r\ndata:[DONE]\r\n", want: []string{"p"}},
		{name: "reports a stream cut before DONE", stream: "data: p\n\n", want: []string{"p"}, wantErr: errNoDone},
		{name: "reports an empty body", stream: "", wantErr: errNoDone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := readSSE(strings.NewReader(tt.stream), func(p []byte) { got = append(got, string(p)) })
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("payloads %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadSSERejectsALineLongerThanTheLimit(t *testing.T) {
	long := "data: " + strings.Repeat("x", maxEventLine) + "\n\ndata: [DONE]\n\n"
	err := readSSE(strings.NewReader(long), func([]byte) {})
	if err == nil || errors.Is(err, errNoDone) {
		t.Fatalf("err = %v, want a line-too-long error", err)
	}
}

func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(": c\r\ndata:x\r\n\r\n"))
	f.Add([]byte("data"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := readSSE(strings.NewReader(string(raw)), func(p []byte) {
			if strings.Contains(string(p), "\n") {
				t.Fatalf("payload %q spans lines", p)
			}
		})
		if err == nil && !strings.Contains(string(raw), "[DONE]") {
			t.Fatalf("stream %q without [DONE] read as complete", raw)
		}
	})
}
