package billing

import (
	"testing"

	"github.com/google/uuid"
)

func TestARequestKeyIsItsPrefixADashAndTheUUIDsCanonicalText(t *testing.T) {
	cases := []struct {
		prefix string
		id     uuid.UUID
	}{
		{"chat", uuid.Must(uuid.NewV7())},
		{"", uuid.Must(uuid.NewV7())},
		{"embeddings", uuid.Nil},
		{"x", uuid.Max},
		{"realtime", uuid.MustParse("0192f1a4-7b3c-7d2e-8f01-a2b3c4d5e6f7")},
	}
	for _, tc := range cases {
		want := tc.prefix + "-" + tc.id.String()
		if got := requestKey(tc.prefix, tc.id); got != want {
			t.Errorf("requestKey(%q, %s) = %q, want %q", tc.prefix, tc.id, got, want)
		}
	}
}

func TestNewRequestKeysAreDistinctUUIDv7s(t *testing.T) {
	s := &Service{}
	seen := map[string]bool{}
	for range 1000 {
		k := s.NewRequestKey("chat")
		id, err := uuid.Parse(k[len("chat-"):])
		if err != nil || id.Version() != 7 || k[:len("chat-")] != "chat-" {
			t.Fatalf("key %q: not chat- and a UUIDv7 (%v)", k, err)
		}
		if seen[k] {
			t.Fatalf("key %q made twice", k)
		}
		seen[k] = true
	}
}
