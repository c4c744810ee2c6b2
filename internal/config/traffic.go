package config

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SeedRate is the rate limits a seeded user, key or group may carry
// (CONTRACT.md §10); zero means none.
type SeedRate struct {
	RPM         int64 `yaml:"rpm"`
	TPM         int64 `yaml:"tpm"`
	Concurrency int64 `yaml:"concurrency"`
}

// SeedBudget is a period budget of a seeded user or key.
type SeedBudget struct {
	PeriodQuota int64  `yaml:"period_quota"`
	Period      string `yaml:"period"`
}

// SeedModelRate is a key's limits for one model.
type SeedModelRate struct {
	RPM int64 `yaml:"rpm"`
	TPM int64 `yaml:"tpm"`
}

// SeedGroup is a group of the seed file, written either as its price ratio
// alone (`vip: 0.5`) or with limits (`vip: {ratio: 0.5, rpm: 600}`).
type SeedGroup struct {
	Ratio      float64
	SeedRate   `yaml:",inline"`
	LogContent map[string]any `yaml:"log_content"`
}

var groupKeys = []string{"ratio", "rpm", "tpm", "concurrency", "log_content"}

// UnmarshalYAML takes both forms, and refuses unknown keys in the long one
// as the rest of the file does.
func (g *SeedGroup) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&g.Ratio)
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a group is its ratio or {ratio, rpm, tpm, concurrency, log_content}", n.Line)
	}
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i].Value
		known := false
		for _, want := range groupKeys {
			known = known || k == want
		}
		if !known {
			return fmt.Errorf("line %d: field %s not found in a group (allowed: %s)", n.Content[i].Line, k, strings.Join(groupKeys, ", "))
		}
	}
	var raw struct {
		Ratio      *float64 `yaml:"ratio"`
		SeedRate   `yaml:",inline"`
		LogContent map[string]any `yaml:"log_content"`
	}
	if err := n.Decode(&raw); err != nil {
		return err
	}
	g.Ratio, g.SeedRate, g.LogContent = 1, raw.SeedRate, raw.LogContent
	if raw.Ratio != nil {
		g.Ratio = *raw.Ratio
	}
	return nil
}

// absorbGroups splits the groups read from the file into ratios (Groups)
// and limits (GroupLimits), the two forms the rest of the code uses.
func (s *Seed) absorbGroups() {
	if s.GroupsYAML == nil {
		return
	}
	if s.Groups == nil {
		s.Groups = map[string]float64{}
	}
	for name, g := range s.GroupsYAML {
		s.Groups[name] = g.Ratio
		if g.SeedRate != (SeedRate{}) {
			if s.GroupLimits == nil {
				s.GroupLimits = map[string]SeedRate{}
			}
			s.GroupLimits[name] = g.SeedRate
		}
		if g.LogContent != nil {
			if s.GroupContent == nil {
				s.GroupContent = map[string]map[string]any{}
			}
			s.GroupContent[name] = g.LogContent
		}
	}
	s.GroupsYAML = nil
}

func (r SeedRate) validate(where string) []error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{{"rpm", r.RPM}, {"tpm", r.TPM}, {"concurrency", r.Concurrency}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s.%s must be a non-negative integer (0 = no limit), got %d", where, f.name, f.v))
		}
	}
	return errs
}

func (b SeedBudget) validate(where string) []error {
	var errs []error
	if b.PeriodQuota < 0 {
		errs = append(errs, fmt.Errorf("%s.period_quota must be a non-negative integer (0 = no budget), got %d", where, b.PeriodQuota))
	}
	switch b.Period {
	case "day", "week", "month":
	case "":
		if b.PeriodQuota > 0 {
			errs = append(errs, fmt.Errorf("%s.period is required with period_quota: day, week or month", where))
		}
	default:
		errs = append(errs, fmt.Errorf("%s.period must be day, week or month, got %q", where, b.Period))
	}
	return errs
}

func (s *Seed) validateLimits() []error {
	var errs []error
	for i, u := range s.Users {
		where := fmt.Sprintf("users[%d]", i)
		errs = append(errs, u.SeedRate.validate(where)...)
		errs = append(errs, u.SeedBudget.validate(where)...)
	}
	for i, t := range s.Tokens {
		where := fmt.Sprintf("tokens[%d]", i)
		errs = append(errs, t.SeedRate.validate(where)...)
		errs = append(errs, t.SeedBudget.validate(where)...)
		models := make([]string, 0, len(t.ModelLimits))
		for m := range t.ModelLimits {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			ml := t.ModelLimits[m]
			if ml.RPM < 0 || ml.TPM < 0 {
				errs = append(errs, fmt.Errorf("%s.model_limits.%s: rpm and tpm must be non-negative integers", where, m))
			}
		}
	}
	names := make([]string, 0, len(s.GroupLimits))
	for n := range s.GroupLimits {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		errs = append(errs, s.GroupLimits[n].validate("groups."+n)...)
	}
	return errs
}

// Notify is where alerts go (CONTRACT.md §10): a webhook signed with
// secret, fired when spending crosses one of the thresholds (percent).
type Notify struct {
	WebhookURL string `yaml:"webhook_url" json:"webhook_url"`
	Secret     string `yaml:"secret" json:"secret"`
	Thresholds []int  `yaml:"thresholds" json:"thresholds"`
}

// IsZero reports whether nothing was configured.
func (n Notify) IsZero() bool { return n.WebhookURL == "" && n.Secret == "" && len(n.Thresholds) == 0 }

// Validate checks the address and the thresholds; errors name the field.
func (n Notify) Validate() error {
	var errs []error
	if n.WebhookURL != "" {
		u, err := url.Parse(n.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("notify.webhook_url must be an http or https address, got %q", n.WebhookURL))
		}
	}
	for i, t := range n.Thresholds {
		if t < 1 || t > 100 {
			errs = append(errs, fmt.Errorf("notify.thresholds[%d] must be a percentage from 1 to 100, got %d", i, t))
		}
	}
	return errors.Join(errs...)
}

func parseThresholds(v string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, fmt.Errorf("config: TURNPIKE_NOTIFY_THRESHOLDS must be comma-separated integers, got %q", v)
		}
		out = append(out, n)
	}
	return out, nil
}
