package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestHashKeyIsTheKeysSHA256InLowerCaseHex(t *testing.T) {
	for _, key := range []string{"", "sk-x", "sk-" + string(make([]byte, 200)), "ключ"} {
		sum := sha256.Sum256([]byte(key))
		if got, want := HashKey(key), hex.EncodeToString(sum[:]); got != want {
			t.Errorf("HashKey(%q) = %s, want %s", key, got, want)
		}
	}
}
