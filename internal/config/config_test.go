package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadWithNothingGivesContractDefaults(t *testing.T) {
	c, err := Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":3000" || c.Database != "sqlite:./data/turnpike.db" || c.QuotaPerUSD != 500000 ||
		c.TaskPollMaxFails != 20 || c.ProtocolTimeout != 600 || c.RetryCount != 2 || c.RequestBodyLimitMB != 32 {
		t.Fatalf("unexpected defaults %+v", c)
	}
}

func TestEnvironmentWinsOverFile(t *testing.T) {
	p := writeFile(t, "listen: ':4000'\nroot_token: file-root-token\ntask_poll_interval_seconds: 2\n")
	c, err := Load(p, env(map[string]string{"TURNPIKE_ROOT_TOKEN": "env-root-token", "TASK_POLL_INTERVAL_SECONDS": "0.2"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":4000" || c.RootToken != "env-root-token" || c.TaskPollInterval != 0.2 {
		t.Fatalf("got %+v", c)
	}
}

func TestLogRetentionDaysComesFromTheFileOrTheEnvironment(t *testing.T) {
	cases := []struct {
		name, yaml string
		env        map[string]string
		want       int
	}{
		{"keeps everything by default", "", nil, 0},
		{"from the file", "log_retention_days: 30\n", nil, 30},
		{"the environment wins", "log_retention_days: 30\n", map[string]string{"TURNPIKE_LOG_RETENTION_DAYS": "7"}, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := ""
			if tc.yaml != "" {
				p = writeFile(t, tc.yaml)
			}
			c, err := Load(p, env(tc.env))
			if err != nil || c.LogRetentionDays != tc.want {
				t.Fatalf("log_retention_days = %d (%v), want %d", c.LogRetentionDays, err, tc.want)
			}
		})
	}
}

func TestLoadRejects(t *testing.T) {
	cases := []struct {
		name, yaml string
		env        map[string]string
		want       string
	}{
		{"unknown key", "listen: ':1'\nlistn: x\n", nil, "listn"},
		{"unknown nested key", "users:\n  - {username: a, pasword: b}\n", nil, "pasword"},
		{"bad integer env", "", map[string]string{"TASK_POLL_MAX_FAILURES": "many"}, "TASK_POLL_MAX_FAILURES"},
		{"bad listen", "listen: nope\n", nil, "listen"},
		{"token without key", "tokens:\n  - {name: k, user: a}\n", nil, "tokens[0]"},
		{"negative log retention", "log_retention_days: -1\n", nil, "log_retention_days"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := ""
			if tc.yaml != "" {
				p = writeFile(t, tc.yaml)
			}
			_, err := Load(p, env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
}

func TestSeedSectionParsesEveryField(t *testing.T) {
	p := writeFile(t, `
root_token: "root-secret"
groups: {default: 1.0, vip: 0.5}
users:
  - {username: alice, password: "alice-pass", role: user, group: default, quota: 5000000}
tokens:
  - {name: alice-key, user: alice, key: "sk-alice-test", quota: -1, models: [], expires_at: null}
channels:
  - name: openai-main
    type: openai
    base_url: "http://127.0.0.1:9101"
    key: "upstream-key"
    models: [gpt-4o-mini]
    groups: [default, vip]
    priority: 10
    weight: 1
    model_mapping: {gpt-4o-mini: gpt-4o-mini-2024-07-18}
    settings: {}
    status: enabled
models:
  gpt-4o-mini: {input_per_mtok: 0.15, output_per_mtok: 0.60}
  dall-e-3: {per_call: 0.04}
  local-llama: {free: true}
plugins:
  - {path: "./plugins/acme/plugin.js"}
`)
	c, err := Load(p, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Groups["vip"] != 0.5 || len(c.Users) != 1 || *c.Tokens[0].Quota != -1 || c.Channels[0].Type != "openai" ||
		c.Models["gpt-4o-mini"].OutputPerMTok != 0.6 || !c.Models["local-llama"].Free || c.Plugins[0].Path == "" {
		t.Fatalf("seed not parsed: %+v", c.Seed)
	}
}

func TestAddressDerivesFromListen(t *testing.T) {
	c := Defaults()
	if got := c.Address(); got != "http://127.0.0.1:3000" {
		t.Fatalf("got %s", got)
	}
	c.ServerAddress = "https://gw.example.com/"
	if got := c.Address(); got != "https://gw.example.com" {
		t.Fatalf("got %s", got)
	}
}

func TestAccountSettingsComeFromYAMLAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/c.yaml"
	yaml := "registration: {enabled: true, initial_quota: 42}\noidc: {issuer: \"https://idp.example\", client_id: tp, scopes: [profile]}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TURNPIKE_REGISTRATION_DEFAULT_GROUP": "starter", "TURNPIKE_OIDC_USERNAME_CLAIM": "email"}
	c, err := Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if !c.Registration.Enabled || c.Registration.InitialQuota != 42 || c.Registration.Group() != "starter" {
		t.Fatalf("registration: %+v", c.Registration)
	}
	if !c.OIDC.Enabled() || c.OIDC.Claim() != "email" || strings.Join(c.OIDC.ScopeList(), " ") != "openid profile" {
		t.Fatalf("oidc: %+v scopes %v", c.OIDC, c.OIDC.ScopeList())
	}
	for name, bad := range map[string]string{
		"unknown key":      "registration: {enabled: true, bonus: 5}\n",
		"negative quota":   "registration: {initial_quota: -1}\n",
		"issuer no client": "oidc: {issuer: \"https://idp.example\"}\n",
	} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := Load(path, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Load("", func(k string) string {
		return map[string]string{"TURNPIKE_REGISTRATION_ENABLED": "maybe"}[k]
	}); err == nil {
		t.Error("a non-boolean TURNPIKE_REGISTRATION_ENABLED was accepted")
	}
}

// CONTRACT §16: a root token shorter than 8 characters is refused at
// start, one shorter than 16 is warned about.
func TestShortRootTokensAreRefusedOrWarnedAbout(t *testing.T) {
	cases := []struct {
		token          string
		refused, warns bool
	}{
		{"a", true, false},
		{"1234567", true, false},
		{"12345678", false, true},
		{"fifteen-chars!!", false, true},
		{"a-root-token-of-24-chars", false, false},
		{"", false, false}, // no root token: the API takes sessions only
	}
	for _, tc := range cases {
		t.Run(tc.token, func(t *testing.T) {
			c, err := Load("", env(map[string]string{"TURNPIKE_ROOT_TOKEN": tc.token}))
			if (err != nil) != tc.refused {
				t.Fatalf("Load: %v, want refused=%v", err, tc.refused)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "root_token") {
					t.Fatalf("the refusal must name the setting: %v", err)
				}
				return
			}
			if w := c.Warnings(); (len(w) > 0) != tc.warns {
				t.Fatalf("warnings %v, want some=%v", w, tc.warns)
			}
		})
	}
}

func TestShortPasswordsAreRefusedAtStart(t *testing.T) {
	cases := []struct {
		name string
		cfg  func(c *Config)
		want string
	}{
		{"a short root_password", func(c *Config) { c.RootPassword = "short" }, "root_password (TURNPIKE_ROOT_PASSWORD) is 5 characters"},
		{"a short seeded password", func(c *Config) {
			c.Seed.Users = []SeedUser{{Username: "alice", Password: "alice"}}
		}, "users[0] (alice): the password is 5 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.cfg(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want it to say %q", err, tc.want)
			}
		})
	}
	ok := Defaults()
	ok.RootPassword = "eight-ch"
	ok.Seed.Users = []SeedUser{{Username: "bob", Password: "12345678"}, {Username: "carol"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("passwords of 8 characters (and a user without one) refused: %v", err)
	}
}

func TestEmptyRedisInTheEnvironmentTurnsOffTheFilesRedis(t *testing.T) {
	p := writeFile(t, "redis: redis://127.0.0.1:6379/0\n")
	t.Setenv("TURNPIKE_REDIS", "")
	c, err := Load(p, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis != "" {
		t.Fatalf("redis = %q, want empty: TURNPIKE_REDIS= wins over the file", c.Redis)
	}
	os.Unsetenv("TURNPIKE_REDIS")
	if c, _ = Load(p, os.Getenv); c.Redis == "" {
		t.Fatal("an unset TURNPIKE_REDIS must leave the file's redis")
	}
}

func TestLoadListsEveryProblemOfTheFileWithLinesAndSuggestions(t *testing.T) {
	p := writeFile(t, "listen: \":3000\"\nredsi: redis://x\nlog_level: loud\nretry_count: -1\nchannels:\n  - {name: a, type: openai, wieght: 3}\n")
	_, err := Load(p, env(nil))
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatalf("err = %v, want the list of problems", err)
	}
	all := strings.Join(probs, "\n")
	for _, want := range []string{
		`line 2: unknown setting redsi`, `did you mean "redis"?`,
		`line 6: unknown setting wieght`, `did you mean "weight"?`,
		`line 3: log_level (TURNPIKE_LOG_LEVEL) "loud"`,
		`retry_count must not be negative`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
}
