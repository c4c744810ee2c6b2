package accounts

import (
	"strings"
	"testing"
)

func TestParseRedemptionCodeAcceptsWhatItIssues(t *testing.T) {
	c := NewRedemptionCode()
	for _, typed := range []string{c, "  " + c + "\n", strings.ToUpper(c)} {
		got, err := ParseRedemptionCode(typed)
		if err != nil || got != c {
			t.Fatalf("%q: %q, %v", typed, got, err)
		}
	}
	for _, bad := range []string{"", "tpr-", c[:len(c)-1], c + "a", "sk-" + c[4:], strings.Replace(c, c[5:6], "1", 1), c[:10] + "é" + c[12:]} {
		if _, err := ParseRedemptionCode(bad); err == nil {
			t.Fatalf("%q was accepted", bad)
		}
	}
}

func FuzzParseRedemptionCode(f *testing.F) {
	f.Add(NewRedemptionCode())
	f.Add("TPR-ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
	f.Add("tpr-\x00")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseRedemptionCode(s)
		if err != nil {
			return
		}
		if len(got) != len(RedemptionPrefix)+redemptionBody || !strings.HasPrefix(got, RedemptionPrefix) {
			t.Fatalf("%q parsed to %q", s, got)
		}
		again, err := ParseRedemptionCode(got)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, got, again, err)
		}
	})
}

func TestTargetOfNamesTheRecordAPathActsOn(t *testing.T) {
	for path, want := range map[string]string{
		"/api/users/7/quota": "7", "/api/tokens/12": "12", "/api/models/gpt-4o": "gpt-4o",
		"/api/groups/vip": "vip", "/api/auth/login": "", "/api/users": "", "/api/plugin/task/acme/versions/3": "acme@3",
		"/api/models/meta/llama-3-70b": "meta/llama-3-70b", "/api/models/qwen/2024": "qwen/2024",
		"/api/plugin/task/acme-video/activate": "acme-video", "/api/plugin/task/dry-run": "",
		"/api/plugin/task/marketplace/install": "", "/api/auth/2fa/enable": "",
	} {
		if got := TargetOf(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

func TestRecoveryCodesCompareWithoutCaseOrSeparators(t *testing.T) {
	c := newRecoveryCode()
	if normalizeRecovery(strings.ToUpper(c)) != normalizeRecovery(strings.ReplaceAll(c, "-", " ")) {
		t.Fatal("normalisation differs")
	}
}

func TestSealedValuesOpenOnlyWithTheSameSecretAndPurpose(t *testing.T) {
	a := newSealer("secret-1", "totp")
	v := a.seal([]byte("JBSWY3DPEHPK3PXP"))
	if got, err := a.open(v); err != nil || string(got) != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("%q %v", got, err)
	}
	for _, other := range []*sealer{newSealer("secret-2", "totp"), newSealer("secret-1", "oidc flow")} {
		if _, err := other.open(v); err == nil {
			t.Fatal("opened with another key")
		}
	}
	if _, err := a.open(v[:len(v)-2] + "AA"); err == nil {
		t.Fatal("a tampered value opened")
	}
}
