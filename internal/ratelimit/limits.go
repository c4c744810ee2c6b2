// Package ratelimit owns traffic control (CONTRACT.md §10): rate limits
// (requests and tokens per minute, concurrent requests) on keys, users and
// groups, per-model limits on a key, and budgets by calendar period. Counts
// live in this process for one node, or in Redis so that every node shares
// them; the relay's call core asks it at admission and tells it the real
// figures at settlement.
package ratelimit

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rate is the rate limits of a subject; zero means none.
type Rate struct {
	RPM         int64 `json:"rpm" yaml:"rpm"`
	TPM         int64 `json:"tpm" yaml:"tpm"`
	Concurrency int64 `json:"concurrency" yaml:"concurrency"`
}

// ModelRate is a key's limit for one model.
type ModelRate struct {
	RPM int64 `json:"rpm" yaml:"rpm"`
	TPM int64 `json:"tpm" yaml:"tpm"`
}

// Limits is everything a key or user may carry; a group carries only Rate.
type Limits struct {
	Rate
	ModelLimits map[string]ModelRate `json:"model_limits,omitempty"`
	PeriodQuota int64                `json:"period_quota"`
	Period      string               `json:"period,omitempty"`
}

// Periods of a budget.
const (
	Day   = "day"
	Week  = "week"
	Month = "month"
)

// IsZero reports whether no limit is set.
func (l *Limits) IsZero() bool {
	return l.Rate == (Rate{}) && len(l.ModelLimits) == 0 && l.PeriodQuota == 0
}

// Validate checks every value; the error names the field.
func (l *Limits) Validate() error {
	if err := l.Rate.Validate(); err != nil {
		return err
	}
	for _, m := range sortedModels(l.ModelLimits) {
		ml := l.ModelLimits[m]
		if m == "" {
			return &FieldError{Field: "model_limits", Msg: "must not name an empty model"}
		}
		if ml.RPM < 0 {
			return &FieldError{Field: "model_limits." + m + ".rpm", Msg: "must be a non-negative integer"}
		}
		if ml.TPM < 0 {
			return &FieldError{Field: "model_limits." + m + ".tpm", Msg: "must be a non-negative integer"}
		}
	}
	if l.PeriodQuota < 0 {
		return &FieldError{Field: "period_quota", Msg: "must be a non-negative integer (0 = no budget)"}
	}
	switch l.Period {
	case Day, Week, Month:
	case "":
		if l.PeriodQuota > 0 {
			return &FieldError{Field: "period", Msg: "is required with period_quota: day, week or month"}
		}
	default:
		return &FieldError{Field: "period", Msg: fmt.Sprintf("must be day, week or month, not %q", l.Period)}
	}
	return nil
}

// Validate checks the rate limits; the error names the field.
func (r Rate) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"rpm", r.RPM}, {"tpm", r.TPM}, {"concurrency", r.Concurrency}} {
		if f.v < 0 {
			return &FieldError{Field: f.name, Msg: "must be a non-negative integer (0 = no limit)"}
		}
	}
	return nil
}

// FieldError is a bad limit value; Field names it as the client wrote it.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Msg }

func sortedModels(m map[string]ModelRate) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParseCount reads a limit value from outside input: a JSON number or a
// decimal string holding a whole non-negative number. field names it in the
// error.
func ParseCount(field string, raw json.RawMessage) (int64, error) {
	s := strings.TrimSpace(string(raw))
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var str string
		if json.Unmarshal([]byte(s), &str) != nil {
			return 0, &FieldError{Field: field, Msg: "must be a non-negative integer"}
		}
		s = strings.TrimSpace(str)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt64/2 {
			return 0, &FieldError{Field: field, Msg: "must be a non-negative integer"}
		}
		n = int64(f)
	}
	if n < 0 {
		return 0, &FieldError{Field: field, Msg: "must be a non-negative integer (0 = no limit)"}
	}
	return n, nil
}

// ParseModelLimits reads a model_limits object from outside input.
func ParseModelLimits(raw json.RawMessage) (map[string]ModelRate, error) {
	if s := strings.TrimSpace(string(raw)); s == "null" || s == "" {
		return nil, nil
	}
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &FieldError{Field: "model_limits", Msg: `must be an object {"<model>": {"rpm": N, "tpm": N}}`}
	}
	out := make(map[string]ModelRate, len(m))
	for model, spec := range m {
		if model == "" {
			return nil, &FieldError{Field: "model_limits", Msg: "must not name an empty model"}
		}
		var mr ModelRate
		for k, v := range spec {
			n, err := ParseCount("model_limits."+model+"."+k, v)
			if err != nil {
				return nil, err
			}
			switch k {
			case "rpm":
				mr.RPM = n
			case "tpm":
				mr.TPM = n
			default:
				return nil, &FieldError{Field: "model_limits." + model, Msg: fmt.Sprintf("has unknown field %q; allowed are rpm and tpm", k)}
			}
		}
		out[model] = mr
	}
	return out, nil
}

// PeriodStart is the start of the UTC calendar period holding t: midnight,
// the Monday of the week, or the first of the month.
func PeriodStart(period string, t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch period {
	case Week:
		back := (int(day.Weekday()) + 6) % 7 // Monday = 0
		return day.AddDate(0, 0, -back)
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

// PeriodEnd is the start of the period after the one holding t.
func PeriodEnd(period string, t time.Time) time.Time {
	s := PeriodStart(period, t)
	switch period {
	case Week:
		return s.AddDate(0, 0, 7)
	case Month:
		return s.AddDate(0, 1, 0)
	}
	return s.AddDate(0, 0, 1)
}
