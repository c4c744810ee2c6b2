package manifest

import (
	"strings"
	"testing"
)

func TestBaseManifestGetsDefaults(t *testing.T) {
	runCases(t, []ruleCase{{name: "minimal per_task plugin", check: func(t *testing.T, m *Manifest) {
		if m.Auth.Type != AuthAPIKey || len(m.Upstreams) != 1 || m.Upstreams[0] != UpstreamVendor {
			t.Errorf("auth/upstreams defaults = %+v %v", m.Auth, m.Upstreams)
		}
		if len(m.SubmitResponseTypes) != 1 || m.SubmitResponseTypes[0] != "json" {
			t.Errorf("submitResponseTypes default = %v", m.SubmitResponseTypes)
		}
		if m.Routes == nil || m.AllowedHosts == nil || m.UsageSchema == nil || m.Protocols == nil {
			t.Error("absent lists must normalise to empty, not nil")
		}
		if !m.Hooks.Has(HookBuildQueryRequest) || m.Hooks.Has(HookListArtifacts) {
			t.Errorf("hooks = %v", m.Hooks.List())
		}
	}}})
}

func TestAPIVersionMustBeOne(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "float 1 accepted", edit: set("apiVersion", float64(1))},
		{name: "int64 1 accepted", edit: set("apiVersion", int64(1))},
		{name: "version 2 rejected", edit: set("apiVersion", float64(2)), want: []string{"meta.apiVersion|must be 1"}},
		{name: "string rejected", edit: set("apiVersion", "1"), want: []string{"meta.apiVersion"}},
		{name: "missing rejected", edit: set("apiVersion", removed), want: []string{"meta.apiVersion|required"}},
	})
}

func TestUnknownAndDraftFieldsAreRejected(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "unknown field", edit: set("modelDiscovery", obj{"protocol": "openai"}), want: []string{"meta.modelDiscovery|unknown field"}},
		{name: "draft endpoints", edit: set("endpoints", arr()), want: []string{"meta.endpoints|draft"}},
		{name: "null optional field reads as absent", edit: set("website", nil)},
		{name: "null required field", edit: set("name", nil), want: []string{"meta.name|required"}},
		{name: "meta not an object", edit: func(_ map[string]any, ex *Exports) { ex.Meta = "x" }, want: []string{"meta|must be an object"}},
	})
}

func TestKeyFormat(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "letters digits dash underscore", edit: set("key", "seedance-hx_2")},
		{name: "exactly 30 characters", edit: set("key", "a"+strings.Repeat("b", 29))},
		{name: "31 characters", edit: set("key", "a"+strings.Repeat("b", 30)), want: []string{"meta.key|longer than 30"}},
		{name: "uppercase", edit: set("key", "Kling"), want: []string{"meta.key|lowercase"}},
		{name: "starts with digit", edit: set("key", "1kling"), want: []string{"meta.key"}},
		{name: "starts with dash", edit: set("key", "-kling"), want: []string{"meta.key"}},
		{name: "dot", edit: set("key", "a.b"), want: []string{"meta.key"}},
		{name: "empty", edit: set("key", ""), want: []string{"meta.key"}},
		{name: "number", edit: set("key", float64(3)), want: []string{"meta.key|must be a string"}},
	})
}

func TestVersionIsSemver(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "release", edit: set("version", "1.2.3")},
		{name: "pre-release", edit: set("version", "1.0.2-del")},
		{name: "pre-release and build", edit: set("version", "2.0.0-rc.1+build.5")},
		{name: "two parts", edit: set("version", "1.2"), want: []string{"meta.version|semantic"}},
		{name: "leading v", edit: set("version", "v1.2.3"), want: []string{"meta.version"}},
		{name: "leading zero", edit: set("version", "01.2.3"), want: []string{"meta.version"}},
		{name: "numeric pre-release with leading zero", edit: set("version", "1.2.3-01"), want: []string{"meta.version"}},
		{name: "empty build", edit: set("version", "1.2.3+"), want: []string{"meta.version"}},
		{name: "long pre-release fits the stored column", edit: set("version", "1.2.3-"+strings.Repeat("a", 64))},
		{name: "longer than the stored column", edit: set("version", "1.2.3-"+strings.Repeat("a", 250)), want: []string{"meta.version|longer"}},
	})
}

func TestAuthorAndName(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "name and https url", edit: set("author", obj{"name": " Quantum ", "url": "https://example.com/me"}), check: func(t *testing.T, m *Manifest) {
			if m.Author != (Author{Name: "Quantum", URL: "https://example.com/me"}) {
				t.Errorf("author = %+v", m.Author)
			}
		}},
		{name: "http url", edit: set("author", obj{"name": "A", "url": "http://example.com"})},
		{name: "missing name", edit: set("author", obj{"url": "https://example.com"}), want: []string{"meta.author.name|required"}},
		{name: "blank name", edit: set("author", obj{"name": "  "}), want: []string{"meta.author.name|empty"}},
		{name: "ftp url", edit: set("author", obj{"name": "A", "url": "ftp://example.com"}), want: []string{"meta.author.url|http"}},
		{name: "relative url", edit: set("author", obj{"name": "A", "url": "/me"}), want: []string{"meta.author.url"}},
		{name: "string author", edit: set("author", "A"), want: []string{"meta.author|object"}},
		{name: "unknown author field", edit: set("author", obj{"name": "A", "email": "a@b"}), want: []string{"meta.author.email|unknown"}},
		{name: "long name without a length rule", edit: set("name", strings.Repeat("n", 300))},
	})
}

func TestModelsAndFetchMode(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "empty model list", edit: set("models", arr())},
		{name: "batch mode", edit: all(set("fetchMode", "batch"), withFunctions("buildBatchQueryRequest", "parseBatchResult"))},
		{name: "a repeated model is dropped", edit: set("models", arr("a", "a")),
			check: listIs(func(m *Manifest) []string { return m.Models }, "a")},
		{name: "empty model", edit: set("models", arr("")), want: []string{"meta.models[0]|empty"}},
		{name: "padded model", edit: set("models", arr(" a")), want: []string{"meta.models[0]|spaces"}},
		{name: "non-string model", edit: set("models", arr(float64(1))), want: []string{"meta.models[0]|string"}},
		{name: "models not an array", edit: set("models", "a"), want: []string{"meta.models|array"}},
		{name: "unknown fetch mode", edit: set("fetchMode", "poll"), want: []string{"meta.fetchMode|per_task"}},
		{name: "missing fetch mode", edit: set("fetchMode", removed), want: []string{"meta.fetchMode|required"}},
	})
}
