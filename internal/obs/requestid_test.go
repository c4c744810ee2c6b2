package obs

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidRequestID(t *testing.T) {
	cases := []struct {
		name string
		id   string
		want bool
	}{
		{"a uuid", "0190e1b2-7c3a-7def-8a00-0123456789ab", true},
		{"printable punctuation and inner spaces", "req 42/a:b=c!~", true},
		{"exactly 128 characters", strings.Repeat("x", 128), true},
		{"empty", "", false},
		{"only spaces", "   ", false},
		{"129 characters", strings.Repeat("x", 129), false},
		{"a newline (log injection)", "a\nlevel=ERROR", false},
		{"a tab", "a\tb", false},
		{"DEL", "a\x7f", false},
		{"non-ASCII", "caf\u00e9", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValidRequestID(tc.id); got != tc.want {
				t.Fatalf("ValidRequestID(%q) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}
}

func FuzzRequestIDFrom(f *testing.F) {
	for _, s := range []string{"", "abc", "a\nb", strings.Repeat("z", 200), "caf\u00e9", " ", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sent string) {
		got := RequestIDFrom(sent)
		if len(got) == 0 || len(got) > MaxRequestIDLen || !utf8.ValidString(got) {
			t.Fatalf("RequestIDFrom(%q) = %q: empty, too long or not text", sent, got)
		}
		for i := 0; i < len(got); i++ {
			if got[i] < 0x20 || got[i] > 0x7e {
				t.Fatalf("RequestIDFrom(%q) = %q holds byte %#x", sent, got, got[i])
			}
		}
		if ValidRequestID(sent) != (got == sent) {
			t.Fatalf("RequestIDFrom(%q) = %q: a valid id must be kept, any other replaced", sent, got)
		}
	})
}

func TestNewRequestIDsAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := NewRequestID()
		if seen[id] || !ValidRequestID(id) {
			t.Fatalf("id %q repeated or invalid", id)
		}
		seen[id] = true
	}
}

func TestLogLinesWrittenWithARequestContextCarryItsID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewContextHandler(slog.NewTextHandler(&buf, nil))).With("component", "x")
	cases := []struct {
		name string
		ctx  context.Context
		want string
		not  string
	}{
		{"a request's line", WithRequestID(context.Background(), "rid-1"), "request_id=rid-1", ""},
		{"a line outside any request", context.Background(), "", "request_id"},
		{"a request whose id the context holds by pointer", WithRequestIDAt(context.Background(), &heldID), "request_id=rid-2", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			log.InfoContext(tc.ctx, "hello")
			line := buf.String()
			if !strings.Contains(line, "component=x") || (tc.want != "" && !strings.Contains(line, tc.want)) ||
				(tc.not != "" && strings.Contains(line, tc.not)) {
				t.Fatalf("line %q", line)
			}
		})
	}
}

var heldID = "rid-2"

func TestARequestIDReadsTheSameWhetherHeldAsAStringOrAtAPointer(t *testing.T) {
	id := "0192f1a4-7b3c-7d2e-8f01-a2b3c4d5e6f7"
	cases := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"a string", WithRequestID(context.Background(), id), id},
		{"at a pointer", WithRequestIDAt(context.Background(), &id), id},
		{"none", context.Background(), ""},
		{"a nil context", nil, ""},
	}
	for _, tc := range cases {
		if got := RequestID(tc.ctx); got != tc.want {
			t.Errorf("%s: RequestID = %q, want %q", tc.name, got, tc.want)
		}
	}
}
