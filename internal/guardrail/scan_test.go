package guardrail

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustGuard(t testing.TB, typ, config string) *guard {
	t.Helper()
	g, err := compile(Spec{Name: "g", Type: typ, Config: json.RawMessage(config)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func kindsOf(g *guard, text string) []string {
	var out []string
	for _, m := range g.scan(text, nil) {
		out = append(out, m.Kind+"="+text[m.Start:m.End])
	}
	return out
}

func TestScannersFindPersonalDataAndSecrets(t *testing.T) {
	pii, sec := mustGuard(t, TypePII, ""), mustGuard(t, TypeSecrets, "")
	cases := []struct {
		name, text string
		g          *guard
		want       string
	}{
		{"email", "write to jane.doe+news@example.co.uk today", pii, "email=jane.doe+news@example.co.uk"},
		{"visa solid", "card 4111111111111111 exp", pii, "card=4111111111111111"},
		{"visa spaced", "card: 4111 1111 1111 1111.", pii, "card=4111 1111 1111 1111"},
		{"mastercard dashed", "5555-5555-5555-4444", pii, "card=5555-5555-5555-4444"},
		{"amex", "amex 378282246310005 ok", pii, "card=378282246310005"},
		{"card then cvv", "4111111111111111 123", pii, "card=4111111111111111"},
		{"card in parentheses", "(4111 1111 1111 1111)", pii, "card=4111 1111 1111 1111"},
		{"card after a colon", "card:4111111111111111", pii, "card=4111111111111111"},
		{"iban grouped", "IBAN DE89 3704 0044 0532 0130 00 please", pii, "iban=DE89 3704 0044 0532 0130 00"},
		{"iban solid", "GB82WEST12345698765432", pii, "iban=GB82WEST12345698765432"},
		{"ssn", "SSN 123-45-6789.", pii, "ssn=123-45-6789"},
		{"phone intl", "call +44 20 7946 0958 now", pii, "phone=+44 20 7946 0958"},
		{"phone us dashed", "at 415-555-2671 ext", pii, "phone=415-555-2671"},
		{"phone us parens", "at (415) 555-2671", pii, "phone=(415) 555-2671"},
		{"ipv4", "server 192.168.10.42 is down", pii, "ipv4=192.168.10.42"},
		{"ipv4 in url", "http://10.0.0.1:8080/x", pii, "ipv4=10.0.0.1"},
		{"ipv6", "addr 2001:db8:85a3::8a2e:370:7334 up", pii, "ipv6=2001:db8:85a3::8a2e:370:7334"},
		{"ipv6 link local", "fe80::1ff:fe23:4567:890a%eth0", pii, "ipv6=fe80::1ff:fe23:4567:890a"},
		{"openai key", "key=sk-proj-abcdefghijklmnopqrstuvwxyz012345", sec, "openai_key=sk-proj-abcdefghijklmnopqrstuvwxyz012345"},
		{"aws key", "AKIAIOSFODNN7EXAMPLE", sec, "aws_key=AKIAIOSFODNN7EXAMPLE"},
		{"github", "token ghp_0123456789abcdefghijklmnopqrstuvwxyz", sec, "github_token=ghp_0123456789abcdefghijklmnopqrstuvwxyz"},
		{"slack", "xoxb-1234567890-abcdefghij", sec, "slack_token=xoxb-1234567890-abcdefghij"},
		{"google", "AIzaSyA1234567890abcdefghijklmnopqrstuv", sec, "google_api_key=AIzaSyA1234567890abcdefghijklmnopqrstuv"},
		{"jwt", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", sec,
			"jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
		{"pem", "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----\ny", sec,
			"private_key=-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----"},
		{"pem cut off", "-----BEGIN PRIVATE KEY-----\nMIIEabc", sec, "private_key=-----BEGIN PRIVATE KEY-----\nMIIEabc"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := kindsOf(tc.g, tc.text)
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("scan(%q) = %q, want [%q]", tc.text, got, tc.want)
			}
		})
	}
}

// TestScannersFindNothingInOrdinaryText runs every built-in scanner over
// a corpus of code, dates, ids, versions, order numbers, timestamps and
// hashes, none of which is personal data or a secret.
func TestScannersFindNothingInOrdinaryText(t *testing.T) {
	pii, sec := mustGuard(t, TypePII, ""), mustGuard(t, TypeSecrets, "")
	for i, line := range corpusLines(t, "testdata/negatives.txt") {
		if got := append(kindsOf(pii, line), kindsOf(sec, line)...); len(got) > 0 {
			t.Errorf("line %d %q: false positives %q", i+1, line, got)
		}
	}
}

func TestScannersFindEveryLineOfThePositiveCorpus(t *testing.T) {
	pii, sec := mustGuard(t, TypePII, ""), mustGuard(t, TypeSecrets, "")
	for i, line := range corpusLines(t, "testdata/positives.txt") {
		if got := append(kindsOf(pii, line), kindsOf(sec, line)...); len(got) == 0 {
			t.Errorf("line %d %q: nothing found", i+1, line)
		}
	}
}

func corpusLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(raw, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
