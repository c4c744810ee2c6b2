package guardrail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Types of guardrail (CONTRACT §21).
const (
	TypePII       = "pii"
	TypeSecrets   = "secrets"
	TypeRegex     = "regex"
	TypeMaxTokens = "max_input_tokens"
	TypePlugin    = "plugin"
)

// Stages a guardrail checks.
const (
	StageRequest  = "request"
	StageResponse = "response"
)

// Modes and actions.
const (
	ModeEnforce   = "enforce"
	ModeMonitor   = "monitor"
	ActionBlock   = "block"
	ActionRedact  = "redact"
	ActionAllow   = "allow"
	ActionMonitor = "monitor"
)

// DefaultWindowChars is the stream window when a guardrail names none.
const DefaultWindowChars = 256

// Spec is a guardrail as the root administers it and the store keeps it.
type Spec struct {
	ID        int64           `json:"id"`
	Name      string          `json:"name"`
	Type      string          `json:"type"`
	Config    json.RawMessage `json:"config"`
	Stages    []string        `json:"stages"`
	Mode      string          `json:"mode"`
	AppliesTo Scope           `json:"applies_to"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Scope says which calls a guardrail checks: every dimension given must
// match; an empty scope checks every call. Keys and teams are ids, groups
// and models names.
type Scope struct {
	Groups []string `json:"groups"`
	Keys   []int64  `json:"keys"`
	Teams  []int64  `json:"teams"`
	Models []string `json:"models"`
}

// Config is a guardrail's typed configuration.
type Config struct {
	// Action is block (default) or redact.
	Action string `json:"action,omitempty"`
	// Kinds narrows pii or secrets to some of their kinds (empty: all).
	Kinds []string `json:"kinds,omitempty"`
	// Patterns are regex's RE2 expressions.
	Patterns []string `json:"patterns,omitempty"`
	// MaxTokens is max_input_tokens' limit.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Plugin names the guardrail plugin (its key).
	Plugin string `json:"plugin,omitempty"`
	// OnError is what a plugin that throws or times out does: block
	// (default) or allow.
	OnError string `json:"on_error,omitempty"`
	// WindowChars is the stream window (default 256).
	WindowChars int `json:"window_chars,omitempty"`
	// Replacement replaces a redacted span; "{kind}" names the kind.
	Replacement string `json:"replacement,omitempty"`
}

// Normalize fills the defaults of s and checks every field, returning all
// problems found.
func (s *Spec) Normalize() (*Config, []string) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	s.Name = strings.TrimSpace(s.Name)
	if s.Name == "" || len(s.Name) > 64 {
		bad("name: required, at most 64 characters")
	}
	if !slices.Contains([]string{TypePII, TypeSecrets, TypeRegex, TypeMaxTokens, TypePlugin}, s.Type) {
		bad("type: must be pii, secrets, regex, max_input_tokens or plugin")
	}
	if s.Mode == "" {
		s.Mode = ModeEnforce
	}
	if s.Mode != ModeEnforce && s.Mode != ModeMonitor {
		bad("mode: must be enforce or monitor")
	}
	s.Stages = normalizeStages(s.Stages, s.Type, bad)
	cfg := s.config(bad)
	if s.AppliesTo.Groups == nil {
		s.AppliesTo.Groups = []string{}
	}
	if s.AppliesTo.Models == nil {
		s.AppliesTo.Models = []string{}
	}
	if s.AppliesTo.Keys == nil {
		s.AppliesTo.Keys = []int64{}
	}
	if s.AppliesTo.Teams == nil {
		s.AppliesTo.Teams = []int64{}
	}
	return cfg, problems
}

func normalizeStages(stages []string, typ string, bad func(string, ...any)) []string {
	if len(stages) == 0 {
		stages = []string{StageRequest, StageResponse}
		if typ == TypeMaxTokens {
			stages = []string{StageRequest}
		}
	}
	out := make([]string, 0, 2)
	for _, st := range stages {
		switch {
		case st != StageRequest && st != StageResponse:
			bad("stages: %q is not request or response", st)
		case st == StageResponse && typ == TypeMaxTokens:
			bad("stages: max_input_tokens checks the request only")
		case !slices.Contains(out, st):
			out = append(out, st)
		}
	}
	return out
}

// config decodes and checks s.Config, writing back its normalised form.
func (s *Spec) config(bad func(string, ...any)) *Config {
	var c Config
	if len(bytes.TrimSpace(s.Config)) > 0 && string(bytes.TrimSpace(s.Config)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(s.Config))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			bad("config: %v", err)
			return &c
		}
	}
	if c.Action == "" {
		c.Action = ActionBlock
	}
	if c.Action != ActionBlock && c.Action != ActionRedact {
		bad("config.action: must be block or redact")
	}
	if c.Action == ActionRedact && s.Type == TypeMaxTokens {
		bad("config.action: max_input_tokens can only block")
	}
	if c.OnError == "" && s.Type == TypePlugin {
		c.OnError = ActionBlock
	}
	if c.OnError != "" && c.OnError != ActionBlock && c.OnError != ActionAllow {
		bad("config.on_error: must be block or allow")
	}
	if c.WindowChars < 0 || c.WindowChars > 65536 {
		bad("config.window_chars: between 1 and 65536")
	}
	s.typeConfig(&c, bad)
	s.Config, _ = json.Marshal(c)
	return &c
}

// typeConfig checks the fields only one type takes.
func (s *Spec) typeConfig(c *Config, bad func(string, ...any)) {
	switch s.Type {
	case TypeRegex:
		if len(c.Patterns) == 0 || len(c.Patterns) > 64 {
			bad("config.patterns: one to 64 patterns")
		}
		for i, p := range c.Patterns {
			if _, err := regexp.Compile(p); err != nil {
				bad("config.patterns[%d]: %v", i, err)
			} else if regexp.MustCompile(p).MatchString("") {
				bad("config.patterns[%d]: matches the empty text", i)
			}
		}
	case TypeMaxTokens:
		if c.MaxTokens <= 0 {
			bad("config.max_tokens: a positive number is required")
		}
	case TypePlugin:
		if c.Plugin == "" {
			bad("config.plugin: the guardrail plugin's key is required")
		}
	case TypePII, TypeSecrets:
		known := piiKinds
		if s.Type == TypeSecrets {
			known = secretKinds
		}
		for _, k := range c.Kinds {
			if !slices.Contains(known, k) {
				bad("config.kinds: %q is not one of %s", k, strings.Join(known, ", "))
			}
		}
	}
}

var (
	piiKinds    = []string{KindEmail, KindPhone, KindCard, KindIBAN, KindSSN, KindIPv4, KindIPv6}
	secretKinds = []string{KindOpenAIKey, KindAWSKey, KindGitHub, KindGitLab, KindSlack, KindGoogleKey, KindStripe, KindJWT, KindPrivateKey}
)
