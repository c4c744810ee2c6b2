package manifest

import "slices"

// Options tune validation to the host doing it.
type Options struct {
	// Capabilities are the host capabilities available; nil means
	// SupportedCapabilities.
	Capabilities []string
}

// Validate checks a plugin's exports against API v1 and returns the
// normalised manifest, or every problem found (and a nil manifest).
func Validate(ex Exports) (*Manifest, Problems) {
	return ValidateWith(ex, Options{})
}

// ValidateWith is Validate with host-specific options.
func ValidateWith(ex Exports, opts Options) (*Manifest, Problems) {
	if opts.Capabilities == nil {
		opts.Capabilities = SupportedCapabilities
	}
	v := &validator{opts: opts, functions: newHookSet(ex.Functions...)}
	m := &Manifest{}
	meta, ok := objectOf(ex.Meta)
	if ok {
		v.meta(m, meta)
	} else {
		v.addf("meta", "must be an object, got %s", kindOf(ex.Meta))
	}
	applyDefaults(m)
	v.exports(m, ex)
	if v.count() > 0 {
		return nil, v.problems
	}
	m.Inferred = v.inferred
	return m, nil
}

// validator carries one validation run's state.
type validator struct {
	collector
	opts      Options
	functions HookSet
	// models is the set of meta.models, or nil when meta.models is invalid:
	// membership checks are then skipped rather than repeated as noise.
	models map[string]bool
	// fetchModeOK and protocolsOK gate the hook checks that depend on them.
	fetchModeOK bool
	protocolsOK bool
	// usageSchemaBad marks an invalid meta.usageSchema, so examples are
	// not checked against it.
	usageSchemaBad bool
	// inferred collects what the host filled in for a legacy declaration.
	inferred []Inference
	// kind is meta.kind as read (task or guardrail).
	kind string
}

// fieldRule validates one top-level meta field into the manifest.
type fieldRule struct {
	name     string
	required bool
	check    func(v *validator, m *Manifest, path string, value any)
}

// fieldRules lists every known meta field. Order matters: models comes
// before the fields whose models must be members of it.
var fieldRules = []fieldRule{
	{"apiVersion", true, (*validator).apiVersion},
	{"key", true, (*validator).key},
	{"name", true, (*validator).name},
	{"version", true, (*validator).version},
	{"author", true, (*validator).author},
	{"models", true, (*validator).modelList},
	{"fetchMode", true, (*validator).fetchMode},
	{"description", false, (*validator).description},
	{"icon", false, (*validator).icon},
	{"website", false, (*validator).website},
	{"sortPriority", false, (*validator).sortPriority},
	{"baseUrl", false, (*validator).baseURL},
	{"allowedHosts", false, (*validator).allowedHosts},
	{"upstreams", false, (*validator).upstreams},
	{"auth", false, (*validator).auth},
	{"channelTypes", false, (*validator).channelTypes},
	{"routes", false, (*validator).routes},
	{"protocols", false, (*validator).protocols},
	{"usageSchema", false, (*validator).usageSchema},
	{"usageExamples", false, (*validator).usageExamples},
	{"usageProfiles", false, (*validator).usageProfiles},
	{"requiredCapabilities", false, (*validator).requiredCapabilities},
	{"submitResponseTypes", false, (*validator).submitResponseTypes},
	{"kind", false, (*validator).kindField},
}

func (v *validator) meta(m *Manifest, meta map[string]any) {
	for _, key := range sortedKeys(meta) {
		known := slices.ContainsFunc(fieldRules, func(r fieldRule) bool { return r.name == key })
		switch {
		case key == "endpoints":
			v.addf("meta.endpoints", "draft field endpoints is not part of API v1; use routes and protocols")
		case !known:
			v.addf(dot("meta", key), "unknown field; this host does not support it")
		}
	}
	v.protocolsOK = true
	v.readKind(m, meta)
	v.kind = m.Kind
	if m.IsGuardrail() {
		v.guardrailMeta(meta)
	}
	for _, r := range fieldRules {
		path := dot("meta", r.name)
		value, present := meta[r.name]
		// A null optional field is read as absent, as JSON would drop an
		// undefined one.
		if !present || value == nil {
			if r.required && !(m.IsGuardrail() && slices.Contains(taskOnlyFields, r.name)) {
				v.addf(path, "is required")
			}
			continue
		}
		if m.IsGuardrail() && slices.Contains(taskOnlyFields, r.name) {
			continue
		}
		r.check(v, m, path, value)
	}
	if meta["usageExamples"] == nil && !v.usageSchemaBad && !m.IsGuardrail() {
		v.requireTokenExample("meta.usageExamples", m.UsageSchema, nil)
	}
}

// applyDefaults fills absent optional fields so consumers never see nil
// lists or an empty auth type.
func applyDefaults(m *Manifest) {
	if m.APIVersion == 0 {
		m.APIVersion = APIVersion
	}
	if len(m.Upstreams) == 0 {
		m.Upstreams = []string{UpstreamVendor}
	}
	if m.Auth.Type == "" {
		m.Auth.Type = AuthAPIKey
	}
	if len(m.SubmitResponseTypes) == 0 {
		m.SubmitResponseTypes = []string{"json"}
	}
	if m.UsageSchema == nil {
		m.UsageSchema = UsageSchema{}
	}
	m.Models = nonNil(m.Models)
	m.AllowedHosts = nonNil(m.AllowedHosts)
	m.ChannelTypes = nonNil(m.ChannelTypes)
	m.Routes = nonNil(m.Routes)
	m.Protocols = nonNil(m.Protocols)
	m.UsageExamples = nonNil(m.UsageExamples)
	m.UsageProfiles = nonNil(m.UsageProfiles)
	m.RequiredCapabilities = nonNil(m.RequiredCapabilities)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// stringValue reads a string, reporting any other kind.
func (v *validator) stringValue(path string, value any) (string, bool) {
	s, ok := value.(string)
	if !ok {
		v.addf(path, "must be a string, got %s", kindOf(value))
	}
	return s, ok
}

// Duplicate policies of stringList.
const (
	// dropDuplicates keeps the first of equal items: a repeat changes
	// nothing, so refusing it would turn away a working plugin.
	dropDuplicates = false
	// refuseDuplicates reports a repeat, for the lists SPEC.md says hold
	// no duplicates.
	refuseDuplicates = true
)

// stringList reads an array of strings. canon checks and rewrites each item
// (reporting its own problems); items equal after canon are duplicates,
// dropped or refused as refuseDup says.
func (v *validator) stringList(path string, value any, refuseDup bool, canon func(path, s string) (string, bool)) ([]string, bool) {
	items, ok := arrayOf(value)
	if !ok {
		v.addf(path, "must be an array, got %s", kindOf(value))
		return nil, false
	}
	start := v.count()
	out := make([]string, 0, len(items))
	for i, item := range items {
		itemPath := at(path, i)
		s, ok := v.stringValue(itemPath, item)
		if !ok {
			continue
		}
		c, ok := canon(itemPath, s)
		if !ok {
			continue
		}
		if slices.Contains(out, c) {
			if refuseDup {
				v.addf(itemPath, "duplicates %q", c)
			}
			continue
		}
		out = append(out, c)
	}
	return out, v.count() == start
}
