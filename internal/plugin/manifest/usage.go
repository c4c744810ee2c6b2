package manifest

import (
	"regexp"
	"slices"
)

// Usage field units of number fields.
const (
	UnitCount  = "count"
	UnitSecond = "second"
	UnitToken  = "token"
	UnitCredit = "credit"
)

var (
	usageUnits = []string{UnitCount, UnitSecond, UnitToken, UnitCredit}
	// usageKeyPattern keeps usage field names identifiers: billing
	// expressions name facts by them, and "a-b" would read as a subtraction.
	usageKeyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// UsageSchema maps usage fact names to their field definitions.
type UsageSchema map[string]UsageField

// UsageField is one usage fact: a number with a unit, a boolean, or an enum
// (Type empty, Enum set).
type UsageField struct {
	Type        string                   `json:"type,omitempty"`
	Unit        string                   `json:"unit,omitempty"`
	UnitLabel   LocalizedText            `json:"unitLabel,omitempty"`
	Description LocalizedText            `json:"description,omitempty"`
	Enum        []string                 `json:"enum,omitempty"`
	EnumLabels  map[string]LocalizedText `json:"enumLabels,omitempty"`
}

// UsageExample is a labelled set of facts shown next to a price editor.
type UsageExample struct {
	Label string         `json:"label"`
	Facts map[string]any `json:"facts"`
}

// UsageProfile replaces the default usage definition for its models.
type UsageProfile struct {
	Models   []string       `json:"models"`
	Schema   UsageSchema    `json:"schema"`
	Examples []UsageExample `json:"examples,omitempty"`
}

// UsageDefinition is one complete usage definition: a profile's or the
// plugin's default.
type UsageDefinition struct {
	Schema   UsageSchema
	Examples []UsageExample
}

// ProfileFor picks the usage definition for a request (SPEC §4.2 rule 4):
// the profile of the final upstream model, else that of the client model,
// else the plugin default. Profiles replace the default; they never merge.
func (m *Manifest) ProfileFor(upstreamModel, clientModel string) UsageDefinition {
	for _, model := range []string{upstreamModel, clientModel} {
		if model == "" {
			continue
		}
		for _, p := range m.UsageProfiles {
			if slices.Contains(p.Models, model) {
				return UsageDefinition{Schema: p.Schema, Examples: p.Examples}
			}
		}
	}
	return UsageDefinition{Schema: m.UsageSchema, Examples: m.UsageExamples}
}

func (v *validator) usageSchema(m *Manifest, path string, value any) {
	schema, ok := v.schemaValue(path, value)
	v.usageSchemaBad = !ok
	m.UsageSchema = schema
}

func (v *validator) usageExamples(m *Manifest, path string, value any) {
	m.UsageExamples = v.examplesValue(path, value, m.UsageSchema, !v.usageSchemaBad)
}

func (v *validator) usageProfiles(m *Manifest, path string, value any) {
	items, ok := arrayOf(value)
	if !ok {
		v.addf(path, "must be an array of {models, schema, examples?}, got %s", kindOf(value))
		return
	}
	owner := map[string]int{}
	for i, item := range items {
		p, ok := v.profile(at(path, i), item, i, owner)
		if ok {
			m.UsageProfiles = append(m.UsageProfiles, p)
		}
	}
}

func (v *validator) profile(path string, item any, index int, owner map[string]int) (UsageProfile, bool) {
	obj, ok := objectOf(item)
	if !ok {
		v.addf(path, "must be an object {models, schema, examples?}, got %s", kindOf(item))
		return UsageProfile{}, false
	}
	start := v.count()
	v.rejectUnknown(path, obj, "models", "schema", "examples")
	var p UsageProfile
	if raw, present := obj["models"]; present {
		p.Models = v.profileModels(dot(path, "models"), raw)
		for j, model := range p.Models {
			if other, taken := owner[model]; taken {
				v.addf(at(dot(path, "models"), j), "model %q is already in meta.usageProfiles[%d]", model, other)
			} else {
				owner[model] = index
			}
		}
	} else {
		v.addf(dot(path, "models"), "is required")
	}
	schemaOK := false
	if raw, present := obj["schema"]; present {
		p.Schema, schemaOK = v.schemaValue(dot(path, "schema"), raw)
	} else {
		v.addf(dot(path, "schema"), "is required; use {} for a profile without usage fields")
	}
	raw, present := obj["examples"]
	if present {
		p.Examples = v.examplesValue(dot(path, "examples"), raw, p.Schema, schemaOK)
	} else if schemaOK {
		v.requireTokenExample(dot(path, "examples"), p.Schema, nil)
	}
	return p, v.count() == start
}

// requireTokenExample insists on an example when a token field exists:
// token counts are the hardest unit to price without one.
func (v *validator) requireTokenExample(path string, schema UsageSchema, examples []UsageExample) {
	if len(examples) > 0 {
		return
	}
	for _, name := range sortedFieldNames(schema) {
		if schema[name].Unit == UnitToken {
			v.addf(path, "needs at least one example because usage field %s counts tokens", name)
			return
		}
	}
}

func sortedFieldNames(schema UsageSchema) []string {
	names := make([]string, 0, len(schema))
	for k := range schema {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
