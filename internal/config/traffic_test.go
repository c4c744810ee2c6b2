package config

import (
	"strings"
	"testing"
)

func TestGroupsTakeTheRatioAloneOrWithLimits(t *testing.T) {
	p := writeFile(t, "groups:\n  default: 1.0\n  vip: {ratio: 0.5, rpm: 600, tpm: 2000000, concurrency: 20}\n  free: {rpm: 5}\n")
	c, err := Load(p, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Groups["default"] != 1 || c.Groups["vip"] != 0.5 || c.Groups["free"] != 1 {
		t.Fatalf("ratios %v", c.Groups)
	}
	if c.GroupLimits["vip"] != (SeedRate{RPM: 600, TPM: 2000000, Concurrency: 20}) || c.GroupLimits["free"].RPM != 5 {
		t.Fatalf("limits %v", c.GroupLimits)
	}
	if _, ok := c.GroupLimits["default"]; ok {
		t.Fatal("a plain ratio has no limits")
	}
}

func TestUsersAndTokensTakeLimitsAndBudgets(t *testing.T) {
	p := writeFile(t, `users:
  - {username: a, password: p-longer, rpm: 10, period_quota: 500, period: week}
tokens:
  - {name: k, user: a, key: sk-aaaaaaaa, tpm: 100, concurrency: 2, model_limits: {gpt-4o: {rpm: 1, tpm: 50}}, period_quota: 9, period: day}
notify: {webhook_url: "http://127.0.0.1:9/hook", secret: s, thresholds: [50, 80, 100]}
`)
	c, err := Load(p, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	u, k := c.Users[0], c.Tokens[0]
	if u.RPM != 10 || u.PeriodQuota != 500 || u.Period != "week" || k.TPM != 100 || k.Concurrency != 2 ||
		k.ModelLimits["gpt-4o"] != (SeedModelRate{RPM: 1, TPM: 50}) || k.Period != "day" {
		t.Fatalf("got %+v %+v", u, k)
	}
	if c.Notify.WebhookURL != "http://127.0.0.1:9/hook" || len(c.Notify.Thresholds) != 3 {
		t.Fatalf("notify %+v", c.Notify)
	}
}

func TestBadLimitValuesAreRefusedAtStartNamingTheField(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"negative rpm", "users:\n  - {username: a, rpm: -1}\n", "users[0].rpm"},
		{"non-numeric tpm", "tokens:\n  - {name: k, user: a, key: sk-aaaaaaaa, tpm: lots}\n", "lots"},
		{"unknown period", "tokens:\n  - {name: k, user: a, key: sk-aaaaaaaa, period_quota: 5, period: year}\n", "tokens[0].period"},
		{"budget without period", "users:\n  - {username: a, period_quota: 5}\n", "users[0].period"},
		{"negative group concurrency", "groups:\n  vip: {ratio: 1, concurrency: -3}\n", "groups.vip.concurrency"},
		{"unknown group key", "groups:\n  vip: {ratio: 1, rps: 3}\n", "rps"},
		{"negative model limit", "tokens:\n  - {name: k, user: a, key: sk-aaaaaaaa, model_limits: {m: {rpm: -1}}}\n", "tokens[0].model_limits.m"},
		{"threshold past 100", "notify: {thresholds: [120]}\n", "notify.thresholds[0]"},
		{"webhook not a URL", "notify: {webhook_url: 'ftp:/x'}\n", "notify.webhook_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeFile(t, tc.yaml), env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to name %s", err, tc.want)
			}
		})
	}
}

func TestNotifyComesFromTheEnvironmentToo(t *testing.T) {
	c, err := Load("", env(map[string]string{"TURNPIKE_NOTIFY_WEBHOOK_URL": "https://h/x", "TURNPIKE_NOTIFY_THRESHOLDS": "50, 90"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Notify.WebhookURL != "https://h/x" || len(c.Notify.Thresholds) != 2 || c.Notify.Thresholds[1] != 90 {
		t.Fatalf("%+v", c.Notify)
	}
}

func FuzzSeedGroupsAndLimits(f *testing.F) {
	for _, s := range []string{
		"groups:\n  vip: {ratio: 0.5, rpm: 600}\n", "groups:\n  a: 1\n", "groups:\n  a: [1]\n",
		"users:\n  - {username: a, rpm: -1, period: year}\n", "notify: {thresholds: [0, 101]}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cfg := Defaults()
		if err := decodeYAML([]byte(in), &cfg); err != nil {
			return
		}
		if cfg.Validate() != nil {
			return
		}
		for name, r := range cfg.GroupLimits {
			if r.RPM < 0 || r.TPM < 0 || r.Concurrency < 0 {
				t.Fatalf("group %s passed validation with %+v", name, r)
			}
		}
		for _, th := range cfg.Notify.Thresholds {
			if th < 1 || th > 100 {
				t.Fatalf("threshold %d passed validation", th)
			}
		}
	})
}
