package tokenize

import "testing"

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
