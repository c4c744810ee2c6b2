package manifest

import (
	"math"
	"regexp"
	"slices"
	"strings"
)

// maxKeyLength bounds meta.key, which is also a directory and URL segment.
const maxKeyLength = 30

// maxVersionLength bounds meta.version: it is stored in an indexed column of
// 255 characters, and a longer one would fail in the database instead of
// being refused here.
const maxVersionLength = 255

var keyPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// semverPattern is semantic versioning 2.0: MAJOR.MINOR.PATCH, optional
// pre-release identifiers (numeric ones without leading zeros) and optional
// build metadata.
var semverPattern = func() *regexp.Regexp {
	const (
		num   = `(?:0|[1-9][0-9]*)`
		pre   = `(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)`
		build = `[0-9A-Za-z-]+`
	)
	return regexp.MustCompile(`^` + num + `\.` + num + `\.` + num +
		`(?:-` + pre + `(?:\.` + pre + `)*)?` +
		`(?:\+` + build + `(?:\.` + build + `)*)?$`)
}()

func (v *validator) apiVersion(m *Manifest, path string, value any) {
	n, ok := integerOf(value)
	if !ok || n != APIVersion {
		v.addf(path, "must be %d; this host implements task plugin API v%d", APIVersion, APIVersion)
		return
	}
	m.APIVersion = APIVersion
}

func (v *validator) key(m *Manifest, path string, value any) {
	s, ok := v.stringValue(path, value)
	if !ok {
		return
	}
	switch {
	case len(s) > maxKeyLength:
		v.addf(path, "is longer than %d characters", maxKeyLength)
	case !keyPattern.MatchString(s):
		v.addf(path, "must start with a lowercase letter and contain only lowercase letters, digits, - and _")
	default:
		m.Key = s
	}
}

func (v *validator) name(m *Manifest, path string, value any) {
	if s, ok := v.stringValue(path, value); ok {
		if text, ok := v.requiredText(path, s); ok {
			m.Name = text
		}
	}
}

func (v *validator) version(m *Manifest, path string, value any) {
	s, ok := v.stringValue(path, value)
	if !ok {
		return
	}
	switch {
	case len(s) > maxVersionLength:
		v.addf(path, "is longer than %d characters", maxVersionLength)
	case !semverPattern.MatchString(s):
		v.addf(path, "must be a semantic version such as 1.2.0 or 1.2.0-beta.1")
	default:
		m.Version = s
	}
}

func (v *validator) author(m *Manifest, path string, value any) {
	obj, ok := objectOf(value)
	if !ok {
		v.addf(path, "must be an object {name, url?}, got %s", kindOf(value))
		return
	}
	v.rejectUnknown(path, obj, "name", "url")
	if raw, present := obj["name"]; !present {
		v.addf(dot(path, "name"), "is required")
	} else if s, ok := v.stringValue(dot(path, "name"), raw); ok {
		if text, ok := v.requiredText(dot(path, "name"), s); ok {
			m.Author.Name = text
		}
	}
	if raw, present := obj["url"]; present && raw != nil {
		if s, ok := v.stringValue(dot(path, "url"), raw); ok {
			if msg := checkWebURL(s, false); msg != "" {
				v.addf(dot(path, "url"), "%s", msg)
			} else {
				m.Author.URL = s
			}
		}
	}
}

func (v *validator) modelList(m *Manifest, path string, value any) {
	models, ok := v.stringList(path, value, dropDuplicates, func(p, s string) (string, bool) {
		switch {
		case s == "":
			v.addf(p, "must not be empty")
		case strings.TrimSpace(s) != s || hasControl(s):
			v.addf(p, "must not have surrounding spaces or control characters")
		default:
			return s, true
		}
		return "", false
	})
	if !ok {
		return
	}
	m.Models = models
	v.models = map[string]bool{}
	for _, s := range models {
		v.models[s] = true
	}
}

func (v *validator) fetchMode(m *Manifest, path string, value any) {
	s, ok := v.stringValue(path, value)
	if !ok {
		return
	}
	if s != FetchPerTask && s != FetchBatch {
		v.addf(path, "must be %q or %q", FetchPerTask, FetchBatch)
		return
	}
	m.FetchMode = s
	v.fetchModeOK = true
}

func (v *validator) description(m *Manifest, path string, value any) {
	if text, ok := v.localizedText(path, value, maxDescriptionRunes); ok {
		m.Description = text
	}
}

func (v *validator) sortPriority(m *Manifest, path string, value any) {
	n, ok := integerOf(value)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		v.addf(path, "must be an integer between %d and %d", math.MinInt32, math.MaxInt32)
		return
	}
	m.SortPriority = int32(n)
}

func (v *validator) requiredCapabilities(m *Manifest, path string, value any) {
	caps, _ := v.stringList(path, value, dropDuplicates, func(p, s string) (string, bool) {
		if !slices.Contains(v.opts.Capabilities, s) {
			v.addf(p, "capability %q is unknown or not supported by this host (supported: %s)",
				s, strings.Join(v.opts.Capabilities, ", "))
			return "", false
		}
		return s, true
	})
	m.RequiredCapabilities = caps
}

func (v *validator) submitResponseTypes(m *Manifest, path string, value any) {
	types, _ := v.stringList(path, value, dropDuplicates, func(p, s string) (string, bool) {
		if s != "json" && s != "sse" {
			v.addf(p, `must be "json" or "sse"`)
			return "", false
		}
		return s, true
	})
	m.SubmitResponseTypes = types
}

// rejectUnknown reports the object's keys outside allowed.
func (v *validator) rejectUnknown(path string, obj map[string]any, allowed ...string) {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(allowed, k) {
			v.addf(dot(path, k), "unknown field")
		}
	}
}
