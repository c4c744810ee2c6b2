// Package config holds the start-up settings: one struct, its defaults, the
// YAML file overlay and the environment overlay (which wins), and the seed
// section of the YAML file. It imports nothing else from the module.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is every start-up setting. Runtime entities (users, channels,
// prices) live in the database; Seed only fills it.
type Config struct {
	Listen            string  `yaml:"listen"`
	Database          string  `yaml:"database"`
	Redis             string  `yaml:"redis"`
	RootToken         string  `yaml:"root_token"`
	RootPassword      string  `yaml:"root_password"`
	ServerAddress     string  `yaml:"server_address"`
	TaskPublicAddress string  `yaml:"task_public_address"`
	CryptoSecret      string  `yaml:"crypto_secret"`
	QuotaPerUSD       int64   `yaml:"quota_per_usd"`
	TaskPollInterval  float64 `yaml:"task_poll_interval_seconds"`
	// BillingLease is how long a node's holds stay its own without a
	// renewal; the holds of a node silent for longer are refunded.
	BillingLease      float64 `yaml:"billing_lease_seconds"`
	TaskPollMaxFails  int     `yaml:"task_poll_max_failures"`
	TaskTimeoutMin    int     `yaml:"task_timeout_minutes"`
	ProtocolTimeout   int     `yaml:"task_plugin_protocol_timeout_seconds"`
	MaxFileDownloadMB int     `yaml:"max_file_download_mb"`

	ModerationDefaultModel string `yaml:"moderation_default_model"`
	RetryCount             int    `yaml:"retry_count"`
	RequestBodyLimitMB     int    `yaml:"request_body_limit_mb"`
	FirstByteTimeout       int    `yaml:"first_byte_timeout_seconds"`
	UpstreamTimeout        int    `yaml:"upstream_timeout_seconds"`
	// ChannelCooldown is how long a channel that answered 401/403 is skipped.
	ChannelCooldown     int    `yaml:"channel_cooldown_seconds"`
	AllowPrivateContent bool   `yaml:"allow_private_content"`
	MetricsPublic       bool   `yaml:"metrics_public"`
	LogLevel            string `yaml:"log_level"`
	// ShutdownGraceSeconds is how long calls in flight may finish after
	// SIGTERM before open streams are ended and billed (0: at once).
	ShutdownGraceSeconds float64 `yaml:"shutdown_grace_seconds"`
	shutdownGraceSet     bool
	// LogRetentionDays is the older spelling of logs.retention_days.
	LogRetentionDays int `yaml:"log_retention_days"`
	// Logs is the usage rows' retention and archive (CONTRACT §20).
	Logs Logs `yaml:"logs"`

	// TrustedProxies are the reverse proxies whose forwarding headers name
	// the client (proxies.go).
	TrustedProxies []string `yaml:"trusted_proxies"`

	Registration Registration `yaml:"registration"`
	OIDC         OIDC         `yaml:"oidc"`
	// Payments are top-ups by card (CONTRACT.md §17).
	Payments Payments `yaml:"payments"`

	// GeneratedSecret is true when CryptoSecret was made up at start.
	// Notify is where alerts are sent (CONTRACT.md §10).
	Notify Notify `yaml:"notify"`
	// PriceCatalogue is the scheduled price catalogue check (CONTRACT.md §13).
	PriceCatalogue PriceCatalogue `yaml:"price_catalogue"`
	// Files is where uploaded files are kept and how large one may be.
	Files Files `yaml:"files"`

	GeneratedSecret bool `yaml:"-"`
	// Demo is set by `turnpike demo`, the one mode that accepts the demo's
	// published key and password.
	Demo bool `yaml:"-"`
	// Lines are the lines of the file's keys and entries, for problems
	// found after decoding (config check).
	Lines Lines `yaml:"-"`

	Seed `yaml:",inline"`
}

// Defaults returns the settings of CONTRACT.md §2 before any overlay.
func Defaults() Config {
	return Config{
		Listen:                 ":3000",
		Database:               "sqlite:./data/turnpike.db",
		QuotaPerUSD:            500000,
		TaskPollInterval:       15,
		BillingLease:           30,
		TaskPollMaxFails:       20,
		TaskTimeoutMin:         1440,
		ProtocolTimeout:        600,
		MaxFileDownloadMB:      64,
		ModerationDefaultModel: "omni-moderation-latest",
		RetryCount:             2,
		RequestBodyLimitMB:     32,
		FirstByteTimeout:       60,
		UpstreamTimeout:        600,
		ChannelCooldown:        300,
		MetricsPublic:          true,
		LogLevel:               "info",
		ShutdownGraceSeconds:   DefaultShutdownGrace,
		shutdownGraceSet:       true,
		Payments:               defaultPayments(),
	}
}

// Load builds the configuration: defaults, then the YAML file (if path is
// not empty), then the environment given as getenv.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Defaults()
	var problems Problems
	if path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		cfg.Lines = FileLines(raw)
		if err := decodeYAML(raw, &cfg); err != nil {
			var te *yaml.TypeError
			if !errors.As(err, &te) {
				return cfg, fmt.Errorf("config %s: %w", path, err)
			}
			// Unknown keys and wrong types: the rest of the file was read,
			// so every other setting is still checked in the same run.
			for _, p := range yamlProblems(err) {
				problems = append(problems, path+": "+p)
			}
			cfg.Seed.absorbGroups()
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		problems = append(problems, err.Error())
	}
	var listed Problems
	if err := cfg.Validate(); errors.As(err, &listed) {
		problems = append(problems, listed...)
	} else if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return cfg, problems
	}
	return cfg, nil
}

// decodeYAML rejects unknown keys so a typo is an error, not a silent default.
func decodeYAML(raw []byte, cfg *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) { // an empty file sets nothing
			return nil
		}
		return err
	}
	cfg.Seed.absorbGroups()
	return nil
}

type envVar struct {
	name string
	set  func(c *Config, v string) error
}

func str(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

// decimal reads a setting that takes a fractional number.
func decimal(name string, dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("config: %s must be a number, got %q", name, v)
		}
		*dst(c) = f
		return nil
	}
}

func integer(name string, dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("config: %s must be an integer, got %q", name, v)
		}
		*dst(c) = n
		return nil
	}
}

// envVars is every setting's environment name: the main table, then the
// accounts and payments sections'.
var envVars = append(append(mainEnvVars[:len(mainEnvVars):len(mainEnvVars)], accountEnvVars...), paymentEnvVars...)

var mainEnvVars = []envVar{
	{"TURNPIKE_LISTEN", str(func(c *Config) *string { return &c.Listen })},
	{"TURNPIKE_DATABASE", str(func(c *Config) *string { return &c.Database })},
	{"TURNPIKE_REDIS", str(func(c *Config) *string { return &c.Redis })},
	{"TURNPIKE_ROOT_TOKEN", str(func(c *Config) *string { return &c.RootToken })},
	{"TURNPIKE_ROOT_PASSWORD", str(func(c *Config) *string { return &c.RootPassword })},
	{"TURNPIKE_SERVER_ADDRESS", str(func(c *Config) *string { return &c.ServerAddress })},
	{"TURNPIKE_TASK_PUBLIC_ADDRESS", str(func(c *Config) *string { return &c.TaskPublicAddress })},
	{"CRYPTO_SECRET", str(func(c *Config) *string { return &c.CryptoSecret })},
	{"TASK_POLL_INTERVAL_SECONDS", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("config: TASK_POLL_INTERVAL_SECONDS must be a number, got %q", v)
		}
		c.TaskPollInterval = f
		return nil
	}},
	{"TURNPIKE_BILLING_LEASE_SECONDS", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("config: TURNPIKE_BILLING_LEASE_SECONDS must be a number, got %q", v)
		}
		c.BillingLease = f
		return nil
	}},
	{"TASK_POLL_MAX_FAILURES", integer("TASK_POLL_MAX_FAILURES", func(c *Config) *int { return &c.TaskPollMaxFails })},
	{"TASK_TIMEOUT_MINUTES", integer("TASK_TIMEOUT_MINUTES", func(c *Config) *int { return &c.TaskTimeoutMin })},
	{"TASK_PLUGIN_PROTOCOL_TIMEOUT_SECONDS", integer("TASK_PLUGIN_PROTOCOL_TIMEOUT_SECONDS", func(c *Config) *int { return &c.ProtocolTimeout })},
	{"MAX_FILE_DOWNLOAD_MB", integer("MAX_FILE_DOWNLOAD_MB", func(c *Config) *int { return &c.MaxFileDownloadMB })},
	{"TURNPIKE_QUOTA_PER_USD", func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("config: TURNPIKE_QUOTA_PER_USD must be an integer, got %q", v)
		}
		c.QuotaPerUSD = n
		return nil
	}},
	{"TURNPIKE_LOG_RETENTION_DAYS", integer("TURNPIKE_LOG_RETENTION_DAYS", func(c *Config) *int { return &c.LogRetentionDays })},
	{"TURNPIKE_NOTIFY_WEBHOOK_URL", str(func(c *Config) *string { return &c.Notify.WebhookURL })},
	{"TURNPIKE_NOTIFY_SECRET", str(func(c *Config) *string { return &c.Notify.Secret })},
	{"TURNPIKE_NOTIFY_THRESHOLDS", func(c *Config, v string) error {
		t, err := parseThresholds(v)
		c.Notify.Thresholds = t
		return err
	}},
	{"TURNPIKE_PRICE_CATALOGUE_URL", str(func(c *Config) *string { return &c.PriceCatalogue.URL })},
	{"TURNPIKE_PRICE_CATALOGUE_INTERVAL_HOURS", decimal("TURNPIKE_PRICE_CATALOGUE_INTERVAL_HOURS", func(c *Config) *float64 { return &c.PriceCatalogue.IntervalHours })},
	{"TURNPIKE_PRICE_CATALOGUE_MAX_CHANGE_RATIO", decimal("TURNPIKE_PRICE_CATALOGUE_MAX_CHANGE_RATIO", func(c *Config) *float64 { return &c.PriceCatalogue.MaxChangeRatio })},
}

func applyEnv(cfg *Config, getenv func(string) string) error {
	if getenv == nil {
		return nil
	}
	for _, ev := range envVars {
		if v := getenv(ev.name); v != "" {
			if err := ev.set(cfg, v); err != nil {
				return err
			}
		}
	}
	// TURNPIKE_REDIS set to nothing turns Redis off for this node even when
	// the file names one (the environment wins, also when it says "none").
	if setEmpty(getenv, "TURNPIKE_REDIS") {
		cfg.Redis = ""
	}
	return nil
}

// setEmpty reports a variable set to the empty string. os.Getenv cannot
// tell it from an unset one, so when getenv is the process environment
// (the binary's case) the environment is asked directly; another getenv
// (a test's map) has no empty-but-set form.
func setEmpty(getenv func(string) string, name string) bool {
	if reflect.ValueOf(getenv).Pointer() != reflect.ValueOf(os.Getenv).Pointer() {
		return false
	}
	v, ok := os.LookupEnv(name)
	return ok && v == ""
}

// Validate checks ranges so a bad setting fails at start with a clear message.
func (c *Config) Validate() error {
	var errs []string
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Sprintf("listen %q is not host:port", c.Listen))
	}
	if n := len(c.RootToken); n > 0 && n < MinRootToken {
		errs = append(errs, fmt.Sprintf("root_token (TURNPIKE_ROOT_TOKEN) is %d characters; it must be at least %d (a long random string)", n, MinRootToken))
	}
	if n := len(c.RootPassword); n > 0 && n < MinPasswordLen {
		errs = append(errs, fmt.Sprintf("root_password (TURNPIKE_ROOT_PASSWORD) is %d characters; every password must have at least %d", n, MinPasswordLen))
	}
	if c.QuotaPerUSD <= 0 {
		errs = append(errs, "quota_per_usd must be positive")
	}
	if c.TaskPollInterval <= 0 {
		errs = append(errs, "task_poll_interval_seconds must be positive")
	}
	if c.BillingLease <= 0 {
		errs = append(errs, "billing_lease_seconds must be positive")
	}
	positive := map[string]int{
		"task_poll_max_failures": c.TaskPollMaxFails, "task_timeout_minutes": c.TaskTimeoutMin,
		"task_plugin_protocol_timeout_seconds": c.ProtocolTimeout, "max_file_download_mb": c.MaxFileDownloadMB,
		"request_body_limit_mb": c.RequestBodyLimitMB, "first_byte_timeout_seconds": c.FirstByteTimeout,
		"upstream_timeout_seconds": c.UpstreamTimeout,
	}
	for name, v := range positive {
		if v <= 0 {
			errs = append(errs, name+" must be positive")
		}
	}
	if c.RetryCount < 0 {
		errs = append(errs, "retry_count must not be negative")
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, c.Lines.At("log_level", fmt.Sprintf("log_level (TURNPIKE_LOG_LEVEL) %q is not one of debug, info, warn, error", c.LogLevel)))
	}
	if c.LogRetentionDays < 0 {
		errs = append(errs, "log_retention_days must not be negative")
	}
	if err := c.PriceCatalogue.Validate(); err != nil {
		errs = append(errs, err.Error())
	}
	if err := c.Notify.Validate(); err != nil {
		errs = append(errs, err.Error())
	}
	errs = append(errs, c.Files.validate()...)
	errs = append(errs, c.Logs.validate()...)
	errs = append(errs, c.validateShutdown()...)
	errs = append(errs, c.validateTrustedProxies()...)
	errs = append(errs, c.validateAccounts()...)
	errs = append(errs, c.Payments.validate()...)
	if err := c.Seed.validate(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return Problems(errs)
	}
	return nil
}

// Problems are every invalid setting Validate found, so config check can
// list them one a line instead of stopping at the first.
type Problems []string

func (p Problems) Error() string { return "config: " + strings.Join(p, "; ") }

// MinPasswordLen is the shortest password any account may have (CONTRACT
// §16), whether it comes from the API, a command, the seed or
// root_password.
const MinPasswordLen = 8

// MinRootToken is the shortest root token a gateway starts with;
// GoodRootToken the length below which it warns (CONTRACT §16).
const (
	MinRootToken  = 8
	GoodRootToken = 16
)

// Warnings are settings that work but should be changed.
func (c *Config) Warnings() []string {
	var out []string
	if n := len(c.RootToken); n >= MinRootToken && n < GoodRootToken {
		out = append(out, fmt.Sprintf("root_token (TURNPIKE_ROOT_TOKEN) is %d characters; use at least %d random ones, it grants everything", n, GoodRootToken))
	}
	return out
}

// PollInterval is TaskPollInterval as a duration.
func (c *Config) PollInterval() time.Duration {
	return time.Duration(c.TaskPollInterval * float64(time.Second))
}

// LeasePeriod is BillingLease as a duration.
func (c *Config) LeasePeriod() time.Duration {
	return time.Duration(c.BillingLease * float64(time.Second))
}

// BodyLimit is the request body limit in bytes.
func (c *Config) BodyLimit() int64 { return int64(c.RequestBodyLimitMB) << 20 }

// Address is ServerAddress, or one derived from the listen address.
func (c *Config) Address() string {
	if c.ServerAddress != "" {
		return strings.TrimRight(c.ServerAddress, "/")
	}
	host, port, _ := net.SplitHostPort(c.Listen)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
