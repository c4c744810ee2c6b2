package auth

import (
	"strings"
	"testing"
	"time"
)

func TestSessionsAcceptOwnTokensOnly(t *testing.T) {
	s := NewSessions("secret", time.Hour)
	tok, _ := s.Issue(42)
	if id, ok := s.Verify(tok); !ok || id != 42 {
		t.Fatalf("valid token rejected: %v %v", id, ok)
	}
	other := NewSessions("rotated", time.Hour)
	if _, ok := other.Verify(tok); ok {
		t.Fatal("token accepted after the secret rotated")
	}
	forged := strings.Replace(tok, "42.", "1.", 1)
	if _, ok := s.Verify(forged); ok {
		t.Fatal("forged user id accepted")
	}
	s.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, ok := s.Verify(tok); ok {
		t.Fatal("expired token accepted")
	}
	for _, junk := range []string{"", ".", "a.b", "1.2.3", "x.y.z.w"} {
		if _, ok := s.Verify(junk); ok {
			t.Fatalf("junk %q accepted", junk)
		}
	}
}

func TestKeysAreRandomHashedAndMasked(t *testing.T) {
	a, b := NewKey(), NewKey()
	if a == b || !strings.HasPrefix(a, "sk-") || len(a) != 51 {
		t.Fatalf("bad keys %q %q", a, b)
	}
	if HashKey(a) == HashKey(b) || len(HashKey(a)) != 64 {
		t.Fatal("hash collision or wrong length")
	}
	if m := MaskKey("sk-alice-test"); m != "sk-ali...test" {
		t.Fatalf("mask = %q", m)
	}
}

func TestPrincipalModelAllowList(t *testing.T) {
	p := &Principal{Models: []string{"a"}}
	if !p.Allows("a") || p.Allows("b") {
		t.Fatal("allow-list not applied")
	}
	if !(&Principal{}).Allows("anything") {
		t.Fatal("empty allow-list must allow all")
	}
	if !(&Principal{Role: "root"}).AtLeast("admin") || (&Principal{Role: "user"}).AtLeast("admin") {
		t.Fatal("role order wrong")
	}
}

func FuzzSessionVerify(f *testing.F) {
	s := NewSessions("k", time.Hour)
	tok, _ := s.Issue(7)
	f.Add(tok)
	f.Add("1.2.x")
	f.Fuzz(func(t *testing.T, in string) {
		if id, ok := s.Verify(in); ok && in != tok && id != 7 {
			t.Fatalf("forged token %q accepted", in)
		}
	})
}
