package task

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVerifyArtifact(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	exp := "2000000100"
	sig := signArtifact("s", "task_1", "video.mp4", 2000000100)
	tests := []struct {
		name                      string
		secret, id, key, exp, sig string
		want                      error
	}{
		{"valid", "s", "task_1", "video.mp4", exp, sig, nil},
		{"another secret", "t", "task_1", "video.mp4", exp, sig, errArtifactSignature},
		{"another task", "s", "task_2", "video.mp4", exp, sig, errArtifactSignature},
		{"a padded expiry", "s", "task_1", "video.mp4", "0" + exp, sig, errArtifactSignature},
		{"no secret", "", "task_1", "video.mp4", exp, signArtifact("", "task_1", "video.mp4", 2000000100), errArtifactSignature},
		{"expired", "s", "task_1", "video.mp4", "1999999999", signArtifact("s", "task_1", "video.mp4", 1999999999), errArtifactExpired},
	}
	for _, tt := range tests {
		if got := verifyArtifact(tt.secret, tt.id, tt.key, tt.exp, tt.sig, now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzVerifyArtifact: only the exact signature of the exact triple passes,
// and every address the host signs verifies.
func FuzzVerifyArtifact(f *testing.F) {
	f.Add("task_1", "video.mp4", "2000000100", "sig")
	f.Add("t\n", "k", "-1", "")
	f.Add("task_1", "video.mp4", "+2000000100", "x")
	f.Fuzz(func(t *testing.T, id, key, exp, sig string) {
		now := time.Unix(1_000_000_000, 0)
		err := verifyArtifact("secret", id, key, exp, sig, now)
		if err == nil {
			want := signArtifact("secret", id, key, mustInt(exp))
			if !bytes.Equal([]byte(sig), []byte(want)) {
				t.Fatalf("accepted a signature that is not the triple's")
			}
		}
		if strings.Contains(id+key, "\n") {
			return
		}
		good := signArtifact("secret", id, key, 2_000_000_000)
		if err := verifyArtifact("secret", id, key, "2000000000", good, now); err != nil {
			t.Fatalf("a host-signed address failed: %v", err)
		}
	})
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
