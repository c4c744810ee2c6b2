package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config check refuses a channel's settings.http2 that serve would refuse,
// naming the channel's line and the value to write.
func TestConfigCheckRefusesAWrongHTTP2Setting(t *testing.T) {
	dir := t.TempDir()
	yaml := filepath.Join(dir, "turnpike.yaml")
	body := `channels:
  - {name: good, type: openai, base_url: "http://127.0.0.1:1", key: k, models: [m], settings: {http2: prior_knowledge}}
  - {name: bad-value, type: openai, base_url: "http://127.0.0.1:1", key: k, models: [m], settings: {http2: always}}
  - {name: bad-address, type: openai, base_url: "https://api.example.com", key: k, models: [m], settings: {http2: prior_knowledge}}
`
	if err := os.WriteFile(yaml, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"config", "check", "--config", yaml}, &out, &errOut, envOf(map[string]string{"TURNPIKE_DATABASE": "sqlite:" + filepath.Join(dir, "never.db")}))
	text := out.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, text, errOut.String())
	}
	for _, want := range []string{
		`line 3: channel bad-value`, `settings.http2 must be "prior_knowledge"`,
		`line 4: channel bad-address`, `needs an http:// base_url`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "channel good") {
		t.Errorf("the valid channel was reported:\n%s", text)
	}
}
