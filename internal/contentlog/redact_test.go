package contentlog

import (
	"strings"
	"testing"
	"time"
)

const (
	openAIKey = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123"
	awsKey    = "AKIAABCDEFGHIJKLMNOP"
	githubKey = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	pemKey    = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----"
)

func TestRedactReplacesEverySecretShapeAndTheChannelsKeys(t *testing.T) {
	channel := []string{"chan-key-0123456789", "AKIDCHANNEL01|s3cr3tpartlong|us-east-1", "short"}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"openai key", "my key " + openAIKey + " ok", "my key [redacted] ok"},
		{"aws access key", "id=" + awsKey + ";", "id=[redacted];"},
		{"github token", `{"t":"` + githubKey + `"}`, `{"t":"[redacted]"}`},
		{"private key block", "k:\n" + pemKey + "\nend", "k:\n[redacted]\nend"},
		{"a key after a JSON escape", `{"content":"key:\n` + openAIKey + `"}`, `{"content":"key:\n[redacted]"}`},
		{"a PEM block in a JSON string", `{"c":"` + strings.ReplaceAll(pemKey, "\n", `\n`) + `"}`, `{"c":"[redacted]"}`},
		{"the channel's key", "upstream said: bad key chan-key-0123456789.", "upstream said: bad key [redacted]."},
		{"each part of a composite key", "secret s3cr3tpartlong and id AKIDCHANNEL01", "secret [redacted] and id [redacted]"},
		{"a short channel key is ordinary text", "a short answer", "a short answer"},
		{"nothing secret", "hello, world", "hello, world"},
		{"two secrets", openAIKey + " " + githubKey, "[redacted] [redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.in, channel); got != tc.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactJoinsSpansThatOverlap(t *testing.T) {
	// The channel key is itself key-shaped: one replacement, not two.
	if got := Redact("x "+openAIKey+" y", []string{openAIKey, openAIKey[:12]}); got != "x [redacted] y" {
		t.Fatalf("got %q", got)
	}
}

func TestCutBacksOffToACharacterBoundary(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
		cut   bool
	}{
		{"abc", 5, "abc", false},
		{"abcdef", 3, "abc", true},
		{"ab€", 4, "ab", true}, // € is 3 bytes: never half of it
		{"€€", 3, "€", true},
	} {
		got, cut := cut([]byte(tc.in), tc.limit)
		if string(got) != tc.want || cut != tc.cut {
			t.Errorf("cut(%q, %d) = %q, %v; want %q, %v", tc.in, tc.limit, got, cut, tc.want, tc.cut)
		}
	}
}

func TestRefsHaveTheirDayAndAreCheckedBeforeNamingAnObject(t *testing.T) {
	ref := newRef(time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC))
	if !validRef(ref) || !strings.HasPrefix(ref, "20261207-") {
		t.Fatalf("ref %q", ref)
	}
	if got := objectKey("gw/", ref); got != "gw/content/2026/12/07/"+ref+".json.gz" {
		t.Errorf("object key %q", got)
	}
	for _, bad := range []string{"", "../../usage/x", "20261307-0123456789abcdef", "20261207-0123456789ABCDEF", "20261207_0123456789abcdef"} {
		if validRef(bad) {
			t.Errorf("validRef(%q) = true", bad)
		}
	}
}

// FuzzRedact feeds outside text (request and answer bodies) to the
// redaction: it never panics, keeps text without secrets as it is, and
// leaves no channel key behind.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "hello", openAIKey, `{"a":"\n` + awsKey + `"}`, pemKey, "-----BEGIN ", `\`, "sk-\\", "chan-key-0123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s, []string{"chan-key-0123456789"})
		if strings.Contains(out, "chan-key-0123456789") {
			t.Fatalf("the channel key survived in %q", out)
		}
		if !strings.Contains(out, Redacted) && out != s {
			t.Fatalf("changed %q to %q without redacting", s, out)
		}
	})
}

func timeNow() time.Time { return time.Now() }
