package relay

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"os"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

const fuzzBoundary = "fuzzboundary"

func formOf(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("--" + fuzzBoundary + "\r\n" + p + "\r\n")
	}
	b.WriteString("--" + fuzzBoundary + "--\r\n")
	return b.String()
}

func field(name, value string) string {
	return "Content-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value
}

func file(name, filename, content string) string {
	return "Content-Disposition: form-data; name=\"" + name + "\"; filename=\"" + filename + "\"\r\nContent-Type: audio/wav\r\n\r\n" + content
}

func TestParseFormSpoolsFilesPastTheMemoryCapAndReplaysThem(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	big := strings.Repeat("0123456789", 100)
	f, err := parseForm(strings.NewReader(formOf(field("model", "m"), file("small", "s.wav", "tiny"), file("big", "b.wav", big))), fuzzBoundary, 16)
	if err != nil {
		t.Fatal(err)
	}
	if f.file("small").path != "" || f.file("big").path == "" {
		t.Fatalf("small spooled %q, big spooled %q", f.file("small").path, f.file("big").path)
	}
	spool := f.file("big").path
	for attempt := 0; attempt < 2; attempt++ {
		got := rebuildAndParse(t, f, map[string]string{"model": "mapped", "extra": "added"})
		if v, _ := got.field("model"); v != "mapped" {
			t.Fatalf("attempt %d: model %q", attempt, v)
		}
		if v, _ := got.field("extra"); v != "added" {
			t.Fatalf("attempt %d: added field %q", attempt, v)
		}
		if string(got.file("big").data) != big || string(got.file("small").data) != "tiny" || got.file("big").filename != "b.wav" || got.file("big").contentType != "audio/wav" {
			t.Fatalf("attempt %d: files not replayed", attempt)
		}
	}
	f.close()
	if _, err := os.Stat(spool); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("spool file survived close: %v", err)
	}
}

func TestParseFormRejectsMalformedBodies(t *testing.T) {
	many := make([]string, maxFormFields+1)
	for i := range many {
		many[i] = field("f", "v")
	}
	cases := []struct{ name, body string }{
		{"empty", ""},
		{"no parts", "--" + fuzzBoundary + "--\r\n"},
		{"part without a name", formOf("Content-Disposition: form-data\r\n\r\nx")},
		{"garbage", "not a form at all"},
		{"cut short", formOf(field("model", "m"))[:40]},
		{"field too long", formOf(field("prompt", strings.Repeat("a", maxFieldBytes+1)))},
		{"too many parts", formOf(many...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseForm(strings.NewReader(tc.body), fuzzBoundary, 1<<20)
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Code != "invalid_multipart" {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestQuotedNamesCannotBreakOutOfTheirHeader(t *testing.T) {
	f := &form{parts: []*formPart{{name: "a\"\r\nX-Evil: 1", filename: "x\".wav", data: []byte("z"), size: 1}}}
	got := rebuildAndParse(t, f, nil)
	if len(got.parts) != 1 || got.parts[0].name != "a\"X-Evil: 1" || got.parts[0].filename != "x\".wav" {
		t.Fatalf("parts %+v", got.parts[0])
	}
}

// rebuildAndParse renders the form for an upstream and parses it back,
// checking the announced length is the real one.
func rebuildAndParse(t testing.TB, f *form, overrides map[string]string) *form {
	t.Helper()
	fb, err := f.body(overrides)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	raw, err := io.ReadAll(fb)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(raw)) != fb.length {
		t.Fatalf("announced %d bytes, sent %d", fb.length, len(raw))
	}
	_, params, err := mime.ParseMediaType(fb.contentType)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseForm(bytes.NewReader(raw), params["boundary"], 1<<30)
	if err != nil {
		t.Fatalf("the rebuilt form does not parse: %v\n%q", err, raw)
	}
	return got
}

// FuzzParseForm feeds arbitrary bodies to the multipart parser: it must
// never panic, must answer a 400 for what it rejects, and what it accepts
// must survive a rebuild with the model rewritten.
func FuzzParseForm(f *testing.F) {
	f.Add([]byte(formOf(field("model", "whisper-1"), file("file", "a.wav", "RIFF"))), int64(2))
	f.Add([]byte(formOf(field("model", "m"), field("model", "second"), field("n", "2"))), int64(1<<20))
	f.Add([]byte(formOf("Content-Disposition: form-data; name=\"image[]\"; filename=\"\\\"q.png\"\r\n\r\nPNG")), int64(0))
	f.Add([]byte("--"+fuzzBoundary+"\r\nContent-Disposition: form-data; name=x\r\n\r\n"), int64(8))
	f.Add([]byte("--"+fuzzBoundary+"--"), int64(8))
	f.Add([]byte("garbage"), int64(8))
	f.Fuzz(func(t *testing.T, body []byte, memCap int64) {
		if memCap < 0 || memCap > 1<<20 {
			memCap = 64
		}
		t.Setenv("TMPDIR", t.TempDir())
		fm, err := parseForm(bytes.NewReader(body), fuzzBoundary, memCap)
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("rejection is not a 400: %v", err)
			}
			return
		}
		defer fm.close()
		model := (&input{form: fm}).str("model")
		got := rebuildAndParse(t, fm, map[string]string{"model": "mapped"})
		defer got.close()
		if v, _ := got.field("model"); v != "mapped" {
			t.Fatalf("model %q (was %q) after rewrite", v, model)
		}
		if len(got.parts) < len(fm.parts) {
			t.Fatalf("%d parts became %d", len(fm.parts), len(got.parts))
		}
		for i, p := range fm.parts {
			want := p.data
			if p.path != "" {
				want, _ = os.ReadFile(p.path)
			}
			g := got.parts[i]
			if g.isFile() != p.isFile() || (p.name != "model" && !bytes.Equal(g.data, want)) {
				t.Fatalf("part %d (%q) not replayed", i, p.name)
			}
		}
	})
}
