package notify

import "testing"

func TestSignIsTheHexHMACSHA256OfTheBody(t *testing.T) {
	// RFC 4231 test case 2.
	got := Sign("Jefe", []byte("what do ya want for nothing?"))
	want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got != want {
		t.Fatalf("got %s", got)
	}
}
