package auth

import (
	"strings"
	"testing"
)

func TestKeysAreRandomHashedAndMasked(t *testing.T) {
	a, b := NewKey(), NewKey()
	if a == b || !strings.HasPrefix(a, "sk-") || len(a) != 51 {
		t.Fatalf("bad keys %q %q", a, b)
	}
	if HashKey(a) == HashKey(b) || len(HashKey(a)) != 64 {
		t.Fatal("hash collision or wrong length")
	}
	if m := MaskKey("sk-alice-test"); m != "sk-a...test" {
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
