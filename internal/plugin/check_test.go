package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFile(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.js")
	if err := os.WriteFile(big, bytes.Repeat([]byte("/"), MaxSourceBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		ok   bool
		want []string
	}{
		{"valid per_task plugin prints a one-line summary", "testdata/per_task.js", true,
			[]string{"ok: acme-video@1.0.0 (Acme Video), per_task, models acme-v1, acme-v1-pro; 2 route(s), std_video, channel types [1901]"}},
		{"valid batch plugin prints a one-line summary", "testdata/batch.js", true, []string{"ok: tunebox@2.1.0 (Tunebox), batch"}},
		{"invalid plugin lists every problem with its path", "testdata/invalid.js", false,
			[]string{"meta.key: ", "meta.author: ", "meta.endpoints: ", "exports.buildBatchQueryRequest: ", "problem(s)"}},
		{"missing file is reported", "testdata/nope.js", false, []string{"cannot read"}},
		{"oversized file is refused before compiling", big, false, []string{"source: is 2097153 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := CheckFile(tt.path, &out); got != tt.ok {
				t.Fatalf("CheckFile = %v, want %v; output:\n%s", got, tt.ok, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if tt.ok && strings.Count(out.String(), "\n") != 1 {
				t.Errorf("a valid plugin should print exactly one line:\n%s", out.String())
			}
		})
	}
}

func TestCheckFileReportsSyntaxErrorsWithPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.js")
	if err := os.WriteFile(path, []byte("export const meta = {\n  key: ;\n};\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if CheckFile(path, &out) {
		t.Fatal("a syntax error must fail the check")
	}
	if !strings.HasPrefix(out.String(), "source:2:") {
		t.Errorf("want the problem located at line 2, got:\n%s", out.String())
	}
}

func TestCheckFileSaysWhichResponsesModesWereInferred(t *testing.T) {
	var out bytes.Buffer
	if !CheckFile("testdata/legacy_responses.js", &out) {
		t.Fatalf("a bare openai_responses claim with renderFinal must pass; output:\n%s", out.String())
	}
	for _, want := range []string{
		"inferred meta.protocols[0]: openai_responses declared as a bare string; supports inferred from the exported render hooks: sync, background",
		"std_responses (sync, background)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
