package guardrail

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScanners checks the hand-written scanners on any text: no panic,
// spans inside the text, in order and without overlap; a redacting window
// fed in chunks never releases what the scanners find in one piece.
func FuzzScanners(f *testing.F) {
	for _, s := range []string{"card 4111 1111 1111 1111", "a@b.co", "+44 20 7946 0958", "fe80::1ff:fe23:4567:890a",
		"DE89 3704 0044 0532 0130 00", "-----BEGIN PRIVATE KEY-----", "sk-abcdefghijklmnopqrstuvwxyz", "123-45-6789", "1.2.3.4"} {
		f.Add(s, uint8(3))
	}
	pii := mustGuard(f, TypePII, `{"action":"redact"}`)
	sec := mustGuard(f, TypeSecrets, `{"action":"redact"}`)
	set, _ := NewSet([]Spec{{Name: "p", Type: TypePII, Config: json.RawMessage(`{"action":"redact","window_chars":32}`)}}, nil)
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		for _, g := range []*guard{pii, sec} {
			last := 0
			for _, m := range g.scan(s, nil) {
				if m.Start < last || m.End <= m.Start || m.End > len(s) {
					t.Fatalf("bad span %+v after %d in %q", m, last, s)
				}
				last = m.End
			}
		}
		w := set.NewWindow(Call{})
		var out strings.Builder
		for _, c := range chunked(s, int(n%16)+1) {
			rel, _ := w.Write(context.Background(), c)
			out.WriteString(rel)
		}
		rel, _ := w.Flush(context.Background())
		out.WriteString(rel)
		for _, m := range pii.scan(s, nil) {
			if m.End-m.Start > 8 && strings.Contains(out.String(), s[m.Start:m.End]) && !strings.Contains(pii.replace(s, pii.scan(s, nil)), s[m.Start:m.End]) {
				t.Fatalf("window released %q", s[m.Start:m.End])
			}
		}
	})
}

// FuzzSpecNormalize feeds the root's guardrail bodies (type, mode, stages
// and config as sent): validation never panics, and what it accepts
// compiles.
func FuzzSpecNormalize(f *testing.F) {
	f.Add("regex", "enforce", "request", `{"patterns":["a+b"],"action":"redact"}`)
	f.Add("pii", "monitor", "response", `{"kinds":["card"],"window_chars":32}`)
	f.Add("max_input_tokens", "", "", `{"max_tokens":5}`)
	f.Add("plugin", "enforce", "request", `{"plugin":"x","on_error":"allow"}`)
	f.Fuzz(func(t *testing.T, typ, mode, stage, config string) {
		s := Spec{Name: "f", Type: typ, Mode: mode, Stages: []string{stage}, Config: json.RawMessage(config)}
		if _, problems := s.Normalize(); len(problems) > 0 {
			return
		}
		if _, err := compile(s); err != nil {
			t.Fatalf("accepted but does not compile: %v", err)
		}
	})
}
