package config

import (
	"errors"
	"fmt"
	"time"
)

// Seed is the data section of the YAML file, upserted by natural key at
// start so starting twice with the same file changes nothing.
type Seed struct {
	Groups   map[string]float64   `yaml:"-"` // ratios; the file writes them under groups (GroupsYAML)
	Users    []SeedUser           `yaml:"users"`
	Tokens   []SeedToken          `yaml:"tokens"`
	Channels []SeedChannel        `yaml:"channels"`
	Models   map[string]SeedPrice `yaml:"models"`
	Plugins  []SeedPlugin         `yaml:"plugins"`

	// GroupLimits are the groups' rate limits. The file writes a group as
	// its ratio or as {ratio, rpm, tpm, concurrency} (GroupsYAML); loading
	// splits it into Groups and GroupLimits.
	GroupLimits map[string]SeedRate  `yaml:"-"`
	GroupsYAML  map[string]SeedGroup `yaml:"groups"`
	// GroupContent are the groups' log_content objects (CONTRACT §20),
	// checked by the admin API's rules.
	GroupContent map[string]map[string]any `yaml:"-"`
}

// SeedUser is a user to create or update by username.
type SeedUser struct {
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	Role     string `yaml:"role"`
	Group    string `yaml:"group"`
	Quota    int64  `yaml:"quota"`

	SeedRate   `yaml:",inline"`
	SeedBudget `yaml:",inline"`
}

// SeedToken is an API key to create by (user, name).
type SeedToken struct {
	Name      string     `yaml:"name"`
	User      string     `yaml:"user"`
	Key       string     `yaml:"key"`
	Quota     *int64     `yaml:"quota"`
	Models    []string   `yaml:"models"`
	ExpiresAt *time.Time `yaml:"expires_at"`

	SeedRate    `yaml:",inline"`
	SeedBudget  `yaml:",inline"`
	ModelLimits map[string]SeedModelRate `yaml:"model_limits"`
	// ResponseCache is the key's response_cache object (CONTRACT §22),
	// checked by the admin API's rules.
	ResponseCache map[string]any `yaml:"response_cache"`
	// LogContent is the key's log_content object (CONTRACT §20), checked
	// by the admin API's rules.
	LogContent map[string]any `yaml:"log_content"`
}

// SeedChannel is a channel to create or update by name.
type SeedChannel struct {
	Name         string            `yaml:"name"`
	Type         any               `yaml:"type"`
	BaseURL      string            `yaml:"base_url"`
	Key          string            `yaml:"key"`
	Models       []string          `yaml:"models"`
	Groups       []string          `yaml:"groups"`
	Priority     int64             `yaml:"priority"`
	Weight       *int              `yaml:"weight"`
	ModelMapping map[string]string `yaml:"model_mapping"`
	Settings     map[string]any    `yaml:"settings"`
	// Cost is the channel's upstream cost ({discount} or {prices}),
	// checked with the admin API's rules when applied.
	Cost   map[string]any `yaml:"cost"`
	Status string         `yaml:"status"`
}

// SeedPrice is a model price in US dollars. It is checked with the admin
// API's rules when applied.
type SeedPrice struct {
	InputPerMTok      float64 `yaml:"input_per_mtok" json:"input_per_mtok,omitempty"`
	OutputPerMTok     float64 `yaml:"output_per_mtok" json:"output_per_mtok,omitempty"`
	CacheReadPerMTok  float64 `yaml:"cache_read_per_mtok" json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64 `yaml:"cache_write_per_mtok" json:"cache_write_per_mtok,omitempty"`
	ReasoningPerMTok  float64 `yaml:"reasoning_per_mtok" json:"reasoning_per_mtok,omitempty"`
	PerCall           float64 `yaml:"per_call" json:"per_call,omitempty"`
	// BatchInputPerMTok and BatchOutputPerMTok are the batch prices.
	BatchInputPerMTok  float64         `yaml:"batch_input_per_mtok" json:"batch_input_per_mtok,omitempty"`
	BatchOutputPerMTok float64         `yaml:"batch_output_per_mtok" json:"batch_output_per_mtok,omitempty"`
	Free               bool            `yaml:"free" json:"free,omitempty"`
	Extra              map[string]any  `yaml:"extra" json:"extra,omitempty"`
	Fallbacks          []string        `yaml:"fallbacks" json:"fallbacks,omitempty"`
	Tiers              []SeedPriceTier `yaml:"tiers" json:"tiers,omitempty"`
	// Affinity and Routing are kept as written and checked by the admin
	// API's rules, which know their defaults.
	Affinity map[string]any `yaml:"affinity" json:"affinity,omitempty"`
	Routing  map[string]any `yaml:"routing" json:"routing,omitempty"`
	// ResponseCache and StreamFailover are CONTRACT §22's; the cache's
	// object is checked by the admin API's rules.
	ResponseCache  map[string]any `yaml:"response_cache" json:"response_cache,omitempty"`
	StreamFailover bool           `yaml:"stream_failover" json:"stream_failover,omitempty"`
}

// SeedPriceTier is a long-context tier of a seed price: its prices apply
// to a whole request whose input tokens exceed AboveInputTokens, and a
// price it leaves out is the base price.
type SeedPriceTier struct {
	AboveInputTokens  int64   `yaml:"above_input_tokens" json:"above_input_tokens"`
	InputPerMTok      float64 `yaml:"input_per_mtok" json:"input_per_mtok,omitempty"`
	OutputPerMTok     float64 `yaml:"output_per_mtok" json:"output_per_mtok,omitempty"`
	CacheReadPerMTok  float64 `yaml:"cache_read_per_mtok" json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64 `yaml:"cache_write_per_mtok" json:"cache_write_per_mtok,omitempty"`
	ReasoningPerMTok  float64 `yaml:"reasoning_per_mtok" json:"reasoning_per_mtok,omitempty"`
}

// SeedPlugin is a task plugin file installed and activated at start.
type SeedPlugin struct {
	Path string `yaml:"path"`
}

func (s *Seed) validate() error {
	var errs []error
	for i, u := range s.Users {
		if u.Username == "" {
			errs = append(errs, fmt.Errorf("users[%d].username is required", i))
		}
		if n := len(u.Password); n > 0 && n < MinPasswordLen {
			errs = append(errs, fmt.Errorf("users[%d] (%s): the password is %d characters; every password must have at least %d", i, u.Username, n, MinPasswordLen))
		}
	}
	for i, t := range s.Tokens {
		if t.Name == "" || t.User == "" || t.Key == "" {
			errs = append(errs, fmt.Errorf("tokens[%d] needs name, user and key", i))
		}
	}
	for i, c := range s.Channels {
		if c.Name == "" || c.Type == nil {
			errs = append(errs, fmt.Errorf("channels[%d] needs name and type", i))
		}
	}
	for i, p := range s.Plugins {
		if p.Path == "" {
			errs = append(errs, fmt.Errorf("plugins[%d].path is required", i))
		}
	}
	errs = append(errs, s.validateLimits()...)
	return errors.Join(errs...)
}
