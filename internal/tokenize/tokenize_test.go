package tokenize

import (
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
