package config

// The relay, server and observability settings were YAML-only; CONTRACT §2
// says every setting has an environment name too: TURNPIKE_ and the YAML
// key in capitals.
func init() {
	envVars = append(envVars,
		envVar{"TURNPIKE_MODERATION_DEFAULT_MODEL", str(func(c *Config) *string { return &c.ModerationDefaultModel })},
		envVar{"TURNPIKE_RETRY_COUNT", integer("TURNPIKE_RETRY_COUNT", func(c *Config) *int { return &c.RetryCount })},
		envVar{"TURNPIKE_REQUEST_BODY_LIMIT_MB", integer("TURNPIKE_REQUEST_BODY_LIMIT_MB", func(c *Config) *int { return &c.RequestBodyLimitMB })},
		envVar{"TURNPIKE_FIRST_BYTE_TIMEOUT_SECONDS", integer("TURNPIKE_FIRST_BYTE_TIMEOUT_SECONDS", func(c *Config) *int { return &c.FirstByteTimeout })},
		envVar{"TURNPIKE_UPSTREAM_TIMEOUT_SECONDS", integer("TURNPIKE_UPSTREAM_TIMEOUT_SECONDS", func(c *Config) *int { return &c.UpstreamTimeout })},
		envVar{"TURNPIKE_CHANNEL_COOLDOWN_SECONDS", integer("TURNPIKE_CHANNEL_COOLDOWN_SECONDS", func(c *Config) *int { return &c.ChannelCooldown })},
		envVar{"TURNPIKE_ALLOW_PRIVATE_CONTENT", boolean("TURNPIKE_ALLOW_PRIVATE_CONTENT", func(c *Config) *bool { return &c.AllowPrivateContent })},
		envVar{"TURNPIKE_METRICS_PUBLIC", boolean("TURNPIKE_METRICS_PUBLIC", func(c *Config) *bool { return &c.MetricsPublic })},
		envVar{"TURNPIKE_LOG_LEVEL", str(func(c *Config) *string { return &c.LogLevel })},
	)
}
