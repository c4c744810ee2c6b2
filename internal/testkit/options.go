package testkit

import (
	"maps"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
)

// DefaultRootPassword is the root user's password unless WithRootPassword
// says otherwise.
const DefaultRootPassword = "testkit-root-password"

// Option changes how Start builds the gateway.
type Option func(*config.Config)

// WithSeed replaces the whole seed (groups, users, tokens, channels,
// models, plugins); the other seed options add to it.
func WithSeed(seed config.Seed) Option {
	return func(c *config.Config) { c.Seed = seed }
}

// WithGroups adds groups with their price ratios.
func WithGroups(groups map[string]float64) Option {
	return func(c *config.Config) {
		if c.Groups == nil {
			c.Groups = map[string]float64{}
		}
		maps.Copy(c.Groups, groups)
	}
}

// WithUsers adds users to the seed.
func WithUsers(users ...config.SeedUser) Option {
	return func(c *config.Config) { c.Users = append(c.Users, users...) }
}

// WithTokens adds API keys to the seed.
func WithTokens(tokens ...config.SeedToken) Option {
	return func(c *config.Config) { c.Tokens = append(c.Tokens, tokens...) }
}

// WithChannels adds channels to the seed.
func WithChannels(channels ...config.SeedChannel) Option {
	return func(c *config.Config) { c.Channels = append(c.Channels, channels...) }
}

// WithModels adds model prices to the seed.
func WithModels(prices map[string]config.SeedPrice) Option {
	return func(c *config.Config) {
		if c.Models == nil {
			c.Models = map[string]config.SeedPrice{}
		}
		maps.Copy(c.Models, prices)
	}
}

// WithPlugins installs and activates task plugin files at start.
func WithPlugins(paths ...string) Option {
	return func(c *config.Config) {
		for _, p := range paths {
			c.Plugins = append(c.Plugins, config.SeedPlugin{Path: p})
		}
	}
}

// WithRootToken sets the static root token accepted by the admin API.
func WithRootToken(token string) Option {
	return func(c *config.Config) { c.RootToken = token }
}

// WithRootPassword sets the password the root user is created with.
func WithRootPassword(password string) Option {
	return func(c *config.Config) { c.RootPassword = password }
}

// WithPollInterval sets how often the task poller looks for due tasks; the
// default of 15 s is far longer than a test waits.
func WithPollInterval(d time.Duration) Option {
	return func(c *config.Config) { c.TaskPollInterval = d.Seconds() }
}

// WithConfig applies any other change to the configuration. It runs in
// order with the other options, after the kit's own defaults.
func WithConfig(change func(*config.Config)) Option {
	return Option(change)
}
