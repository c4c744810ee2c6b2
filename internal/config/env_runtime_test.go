package config

import (
	"reflect"
	"strings"
	"testing"
)

// legacyEnv are the environment names the contract fixed before the
// TURNPIKE_ prefix became the rule.
var legacyEnv = map[string]string{
	"crypto_secret":                        "CRYPTO_SECRET",
	"task_poll_interval_seconds":           "TASK_POLL_INTERVAL_SECONDS",
	"task_poll_max_failures":               "TASK_POLL_MAX_FAILURES",
	"task_timeout_minutes":                 "TASK_TIMEOUT_MINUTES",
	"task_plugin_protocol_timeout_seconds": "TASK_PLUGIN_PROTOCOL_TIMEOUT_SECONDS",
	"max_file_download_mb":                 "MAX_FILE_DOWNLOAD_MB",
}

// CONTRACT §2: every setting can come from the environment or YAML.
func TestEveryTopLevelSettingHasAnEnvironmentName(t *testing.T) {
	known := map[string]bool{}
	for _, ev := range envVars {
		known[ev.name] = true
	}
	typ := reflect.TypeOf(Config{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" || f.Type.Kind() == reflect.Struct {
			continue // the seed and nested sections have their own tests
		}
		want := legacyEnv[key]
		if want == "" {
			want = "TURNPIKE_" + strings.ToUpper(key)
		}
		if !known[want] {
			t.Errorf("YAML key %s has no environment name %s", key, want)
		}
	}
}

func TestTheRuntimeSettingsComeFromTheEnvironment(t *testing.T) {
	env := map[string]string{
		"TURNPIKE_LOG_LEVEL": "debug", "TURNPIKE_RETRY_COUNT": "5", "TURNPIKE_REQUEST_BODY_LIMIT_MB": "7",
		"TURNPIKE_FIRST_BYTE_TIMEOUT_SECONDS": "11", "TURNPIKE_UPSTREAM_TIMEOUT_SECONDS": "99",
		"TURNPIKE_CHANNEL_COOLDOWN_SECONDS": "42", "TURNPIKE_METRICS_PUBLIC": "false",
		"TURNPIKE_ALLOW_PRIVATE_CONTENT": "true", "TURNPIKE_MODERATION_DEFAULT_MODEL": "mod-1",
	}
	cfg, err := Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	got := []any{cfg.LogLevel, cfg.RetryCount, cfg.RequestBodyLimitMB, cfg.FirstByteTimeout, cfg.UpstreamTimeout,
		cfg.ChannelCooldown, cfg.MetricsPublic, cfg.AllowPrivateContent, cfg.ModerationDefaultModel}
	want := []any{"debug", 5, 7, 11, 99, 42, false, true, "mod-1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := Load("", func(k string) string {
		return map[string]string{"TURNPIKE_METRICS_PUBLIC": "sometimes"}[k]
	}); err == nil || !strings.Contains(err.Error(), "TURNPIKE_METRICS_PUBLIC") {
		t.Fatalf("a bad boolean: %v", err)
	}
}
