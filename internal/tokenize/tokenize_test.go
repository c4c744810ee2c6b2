package tokenize

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestCountMatchesKnownEncodings(t *testing.T) {
	cases := []struct {
		model, text string
		want        int
	}{
		{"gpt-4o-mini", "hello world", 2},
		{"gpt-3.5-turbo", "hello world", 2},
		{"gpt-4o", "", 0},
		{"claude-3-5-sonnet", "The quick brown fox jumps over the lazy dog.", 10},
		{"gpt-4o", "<|endoftext|>", 7}, // counted as text, not as a special token
	}
	for _, tc := range cases {
		if got := Count(tc.model, tc.text); got != tc.want {
			t.Errorf("Count(%q, %q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
	}
}

func TestMessagesAddsFramingOverhead(t *testing.T) {
	got := Messages("gpt-4o", [][]string{{"hello world"}, {"hi"}})
	if want := 3 + 3 + 2 + 3 + 1; got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
}

func BenchmarkCountShortPrompt(b *testing.B) {
	Count("gpt-4o", "warm up")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Count("gpt-4o", "Say hello to the gateway benchmark, please, in one short sentence.")
	}
}

func TestRankTableRefusesMalformedFiles(t *testing.T) {
	cases := []struct {
		name  string
		reads []string // what each open returns, in turn
	}{
		{"a rank out of order", []string{"YQ== 0\nYg== 2\n"}},
		{"a line without a space", []string{"YQ== 0\nYg==\n"}},
		{"a rank that is no number", []string{"YQ== zero\n"}},
		{"bad base64", []string{"YQ== 0\n!!!! 1\n", "YQ== 0\n!!!! 1\n"}},
		{"a file that grows between the reads", []string{"YQ== 0\n", "YQ== 0\nYg== 1\n"}},
		{"a file whose token changes length between the reads", []string{"YQ== 0\n", "YWI= 0\n"}},
		{"a token longer than a length byte holds", []string{base64.StdEncoding.EncodeToString(make([]byte, 256)) + " 0\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opened := 0
			_, err := newRankTable(func() (io.ReadCloser, error) {
				r := io.NopCloser(strings.NewReader(tc.reads[min(opened, len(tc.reads)-1)]))
				opened++
				return r, nil
			})
			if err == nil {
				t.Fatalf("table built from %q", tc.reads)
			}
		})
	}
}

func TestRankTableFindsItsTokens(t *testing.T) {
	table, err := newRankTable(func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("YQ== 0\nYg== 1\n\nYWI= 2\n")), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]int{"a": 0, "b": 1, "ab": 2, "ba": -1, "": -1} {
		if got := table.rank(tok); got != want {
			t.Errorf("rank(%q) = %d, want %d", tok, got, want)
		}
	}
}

// TestRankTableKeepsTokensAcrossGroups builds a table of more ranks than
// one group of recorded starts, of lengths from 1 to 255 bytes, and finds
// every token at its rank: a start summed from the lengths before it in its
// group must land exactly on the token.
func TestRankTableKeepsTokensAcrossGroups(t *testing.T) {
	var file strings.Builder
	var toks []string
	for r := 0; r < 3*16+5; r++ {
		tok := strings.Repeat(string(rune('a'+r%26)), 1+(r*37)%255) + string(rune('0'+r/26))
		if len(tok) > 255 {
			tok = tok[:255]
		}
		toks = append(toks, tok)
		fmt.Fprintf(&file, "%s %d\n", base64.StdEncoding.EncodeToString([]byte(tok)), r)
	}
	table, err := newRankTable(func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(file.String())), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, tok := range toks {
		if got := table.rank(tok); got != r {
			t.Errorf("rank of token %d (%d bytes) = %d", r, len(tok), got)
		}
		if got := string(table.token(r)); got != tok {
			t.Errorf("token(%d) = %d bytes, want %d", r, len(got), len(tok))
		}
	}
}

// TestRankTablesTakeTheirSize holds each encoding's table to its size: one
// start per group of sixteen ranks and a length byte per rank, not a 4-byte
// start per rank (3.25 and 1.57 MB before).
func TestRankTablesTakeTheirSize(t *testing.T) {
	for _, tc := range []struct {
		enc    *encoding
		budget int
	}{{o200k, 2_700_000}, {cl100k, 1_300_000}} {
		enc := tc.enc.get()
		if enc == nil {
			t.Fatalf("%s did not load", tc.enc.name)
		}
		got := enc.table.memory()
		t.Logf("%s: %d ranks, %d bytes, %.2f a rank", tc.enc.name, enc.table.n, got, float64(got)/float64(enc.table.n))
		if got > tc.budget {
			t.Errorf("%s table takes %d bytes, budget %d", tc.enc.name, got, tc.budget)
		}
	}
}
