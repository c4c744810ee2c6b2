package manifest

import (
	"slices"
	"strings"
	"testing"
)

var (
	secondsField = obj{"type": "number", "unit": "second", "description": "Video unit price"}
	tokensField  = obj{"type": "number", "unit": "token"}
	countField   = obj{"type": "number", "unit": "count", "unitLabel": obj{"en": "image", "zh": "张"}}
	flagField    = obj{"type": "boolean", "description": "With audio"}
	sizeField    = obj{"enum": arr("720p", "1080p"), "enumLabels": obj{"720p": "HD"}}
)

func TestUsageSchema(t *testing.T) {
	schema := func(fields obj) edit { return set("usageSchema", fields) }
	runCases(t, []ruleCase{
		{name: "every field kind", edit: schema(obj{"seconds": secondsField, "images": countField, "audio": flagField, "size": sizeField}),
			check: func(t *testing.T, m *Manifest) {
				s := m.UsageSchema
				if s["seconds"].Description["en"] != "Video unit price" || s["images"].UnitLabel["zh"] != "张" {
					t.Errorf("texts not normalised: %+v", s)
				}
				if s["size"].Type != "" || len(s["size"].Enum) != 2 || s["size"].EnumLabels["720p"]["en"] != "HD" {
					t.Errorf("enum field = %+v", s["size"])
				}
			}},
		{name: "empty schema", edit: schema(obj{})},
		{name: "credit unit", edit: schema(obj{"units": obj{"type": "number", "unit": "credit"}})},
		{name: "number without unit", edit: schema(obj{"n": obj{"type": "number"}}), want: []string{"meta.usageSchema.n.unit|required"}},
		{name: "unknown unit", edit: schema(obj{"n": obj{"type": "number", "unit": "byte"}}), want: []string{"meta.usageSchema.n.unit"}},
		{name: "unitLabel on seconds", edit: schema(obj{"n": obj{"type": "number", "unit": "second", "unitLabel": "s"}}),
			want: []string{"meta.usageSchema.n.unitLabel|count"}},
		{name: "string type", edit: schema(obj{"n": obj{"type": "string"}}), want: []string{"meta.usageSchema.n.type"}},
		{name: "missing type", edit: schema(obj{"n": obj{"unit": "count"}}), want: []string{"meta.usageSchema.n.type|required"}},
		{name: "unit on boolean", edit: schema(obj{"n": obj{"type": "boolean", "unit": "count"}}), want: []string{"meta.usageSchema.n.unit|unknown"}},
		{name: "type on enum", edit: schema(obj{"n": obj{"type": "string", "enum": arr("a")}}), want: []string{"meta.usageSchema.n.type|unknown"}},
		{name: "empty enum", edit: schema(obj{"n": obj{"enum": arr()}}), want: []string{"meta.usageSchema.n.enum|at least one"}},
		{name: "repeated enum value is dropped", edit: schema(obj{"n": obj{"enum": arr("a", "a")}}),
			check: func(t *testing.T, m *Manifest) {
				if got := m.UsageSchema["n"].Enum; !slices.Equal(got, []string{"a"}) {
					t.Errorf("enum = %v", got)
				}
			}},
		{name: "empty enum value", edit: schema(obj{"n": obj{"enum": arr("a", "")}}), want: []string{"meta.usageSchema.n.enum[1]|empty"}},
		{name: "enumLabels key outside enum", edit: schema(obj{"n": obj{"enum": arr("a"), "enumLabels": obj{"b": "B"}}}),
			want: []string{"meta.usageSchema.n.enumLabels.b|enum values"}},
		{name: "description too long", edit: schema(obj{"n": obj{"type": "boolean", "description": strings.Repeat("x", 257)}}),
			want: []string{"meta.usageSchema.n.description|256"}},
		{name: "invalid field name", edit: schema(obj{"1n": flagField}), want: []string{"meta.usageSchema.1n|field name"}},
		{name: "null schema", edit: set("usageSchema", nil), check: func(t *testing.T, m *Manifest) {
			if len(m.UsageSchema) != 0 {
				t.Error("null schema must read as absent")
			}
		}},
		{name: "schema an array", edit: set("usageSchema", arr()), want: []string{"meta.usageSchema|object"}},
	})
}

func TestUsageExamples(t *testing.T) {
	base := set("usageSchema", obj{"seconds": secondsField, "size": sizeField, "audio": flagField})
	example := func(facts obj) edit {
		return all(base, set("usageExamples", arr(obj{"label": "5s 720p", "facts": facts})))
	}
	runCases(t, []ruleCase{
		{name: "complete example", edit: example(obj{"seconds": float64(5), "size": "720p", "audio": true}), check: func(t *testing.T, m *Manifest) {
			if m.UsageExamples[0].Label != "5s 720p" || m.UsageExamples[0].Facts["size"] != "720p" {
				t.Errorf("examples = %+v", m.UsageExamples)
			}
		}},
		{name: "missing fact", edit: example(obj{"seconds": float64(5), "size": "720p"}), want: []string{"meta.usageExamples[0].facts.audio|required"}},
		{name: "extra fact", edit: example(obj{"seconds": float64(5), "size": "720p", "audio": true, "n": float64(1)}),
			want: []string{"meta.usageExamples[0].facts.n|not a field"}},
		{name: "enum value outside enum", edit: example(obj{"seconds": float64(5), "size": "4k", "audio": true}),
			want: []string{"meta.usageExamples[0].facts.size|enum"}},
		{name: "boolean as string", edit: example(obj{"seconds": float64(5), "size": "720p", "audio": "yes"}),
			want: []string{"meta.usageExamples[0].facts.audio|boolean"}},
		{name: "number as string", edit: example(obj{"seconds": "5", "size": "720p", "audio": true}),
			want: []string{"meta.usageExamples[0].facts.seconds|number"}},
		{name: "fractional count is a number", edit: all(set("usageSchema", obj{"n": countField}), set("usageExamples", arr(obj{"label": "x", "facts": obj{"n": 1.5}})))},
		{name: "missing label", edit: all(base, set("usageExamples", arr(obj{"facts": obj{}}))),
			want: []string{"meta.usageExamples[0].label|required", "meta.usageExamples[0].facts.seconds", "meta.usageExamples[0].facts.size", "meta.usageExamples[0].facts.audio"}},
		{name: "unknown example field", edit: all(set("usageExamples", arr(obj{"label": "x", "facts": obj{}, "price": float64(1)}))),
			want: []string{"meta.usageExamples[0].price|unknown"}},
		{name: "token field without examples", edit: set("usageSchema", obj{"tokens": tokensField}),
			want: []string{"meta.usageExamples|token"}},
		{name: "token field with empty examples", edit: all(set("usageSchema", obj{"tokens": tokensField}), set("usageExamples", arr())),
			want: []string{"meta.usageExamples|token"}},
		{name: "token field with an example", edit: all(set("usageSchema", obj{"tokens": tokensField}),
			set("usageExamples", arr(obj{"label": "1k", "facts": obj{"tokens": float64(1000)}})))},
		{name: "examples skip fact checks when the schema is invalid", edit: all(set("usageSchema", obj{"n": obj{"type": "x"}}),
			set("usageExamples", arr(obj{"label": "a", "facts": obj{"zzz": float64(1)}}))), want: []string{"meta.usageSchema.n.type"}},
	})
}

func TestUsageProfiles(t *testing.T) {
	profile := func(models any, schema any, extra ...any) obj {
		p := obj{"models": models, "schema": schema}
		for i := 0; i < len(extra); i += 2 {
			p[extra[i].(string)] = extra[i+1]
		}
		return p
	}
	runCases(t, []ruleCase{
		{name: "two profiles", edit: set("usageProfiles", arr(profile(arr("m1"), obj{"seconds": secondsField}), profile(arr("m2"), obj{})))},
		{name: "profile with examples", edit: set("usageProfiles", arr(profile(arr("m1"), obj{"tokens": tokensField},
			"examples", arr(obj{"label": "a", "facts": obj{"tokens": float64(10)}}))))},
		{name: "token profile without examples", edit: set("usageProfiles", arr(profile(arr("m1"), obj{"tokens": tokensField}))),
			want: []string{"meta.usageProfiles[0].examples|token"}},
		{name: "profile example checked against profile schema", edit: set("usageProfiles", arr(profile(arr("m1"), obj{},
			"examples", arr(obj{"label": "a", "facts": obj{"seconds": float64(1)}})))),
			want: []string{"meta.usageProfiles[0].examples[0].facts.seconds|not a field"}},
		{name: "model in two profiles", edit: set("usageProfiles", arr(profile(arr("m1"), obj{}), profile(arr("m2", "m1"), obj{}))),
			want: []string{"meta.usageProfiles[1].models[1]|usageProfiles[0]"}},
		{name: "model spelled differently", edit: set("usageProfiles", arr(profile(arr("M1"), obj{}))),
			want: []string{"meta.usageProfiles[0].models[0]|meta.models"}},
		{name: "empty model list", edit: set("usageProfiles", arr(profile(arr(), obj{}))), want: []string{"meta.usageProfiles[0].models|empty"}},
		{name: "missing schema", edit: set("usageProfiles", arr(obj{"models": arr("m1")})), want: []string{"meta.usageProfiles[0].schema|required"}},
		{name: "missing models", edit: set("usageProfiles", arr(obj{"schema": obj{}})), want: []string{"meta.usageProfiles[0].models|required"}},
		{name: "unknown profile field", edit: set("usageProfiles", arr(profile(arr("m1"), obj{}, "inherit", true))),
			want: []string{"meta.usageProfiles[0].inherit|unknown"}},
		{name: "profiles not an array", edit: set("usageProfiles", obj{}), want: []string{"meta.usageProfiles|array"}},
	})
}

func TestProfileForPrefersUpstreamThenClientThenDefault(t *testing.T) {
	ex := baseExports()
	meta := ex.Meta.(map[string]any)
	meta["models"] = arr("client", "upstream", "other")
	meta["usageSchema"] = obj{"seconds": secondsField}
	meta["usageProfiles"] = arr(
		obj{"models": arr("upstream"), "schema": obj{"images": countField}},
		obj{"models": arr("client"), "schema": obj{"audio": flagField}},
	)
	m, problems := Validate(ex)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, tc := range []struct {
		name, upstream, client, wantField string
	}{
		{"upstream profile wins", "upstream", "client", "images"},
		{"client profile when upstream has none", "vendor-endpoint-id", "client", "audio"},
		{"default when neither has one", "vendor-endpoint-id", "other", "seconds"},
		{"default for empty names", "", "", "seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := m.ProfileFor(tc.upstream, tc.client)
			if _, ok := def.Schema[tc.wantField]; !ok || len(def.Schema) != 1 {
				t.Errorf("schema = %v, want only %s", def.Schema, tc.wantField)
			}
		})
	}
}
