package manifest

import "slices"

// Plugin kinds (meta.kind). A kind is a set of exported hooks on the one
// runtime, the one administration and the one version history: a task
// plugin drives upstream tasks, a guardrail plugin checks the text of model
// calls (CONTRACT §21).
const (
	KindTask      = "task"
	KindGuardrail = "guardrail"
)

// The hooks of a guardrail plugin.
const (
	HookCheckRequest  = "checkRequest"
	HookCheckResponse = "checkResponse"
)

var guardrailHooks = []string{HookCheckRequest, HookCheckResponse}

// A task plugin's Kind is empty: the normalised meta of the plugins
// published before kinds existed is unchanged.

// taskOnlyFields are meta fields that only mean something for a task
// plugin: required there, refused on a guardrail plugin.
var taskOnlyFields = []string{"models", "fetchMode", "baseUrl", "allowedHosts", "upstreams", "auth",
	"channelTypes", "routes", "protocols", "usageSchema", "usageExamples", "usageProfiles", "submitResponseTypes"}

// readKind takes meta.kind before the other fields, since it decides which
// of them are required.
func (v *validator) readKind(m *Manifest, meta map[string]any) {
	raw, ok := meta["kind"]
	if !ok || raw == nil {
		return
	}
	s, ok := v.stringValue("meta.kind", raw)
	if !ok {
		return
	}
	switch s {
	case KindGuardrail:
		m.Kind = s
	case KindTask:
	default:
		v.addf("meta.kind", "must be %q or %q", KindTask, KindGuardrail)
	}
}

// kindField accepts meta.kind in the field rules (readKind read it).
func (v *validator) kindField(*Manifest, string, any) {}

// guardrailMeta refuses the task fields on a guardrail plugin.
func (v *validator) guardrailMeta(meta map[string]any) {
	for _, f := range taskOnlyFields {
		if val, ok := meta[f]; ok && val != nil {
			v.addf(dot("meta", f), "is a task plugin field; a guardrail plugin has none")
		}
	}
}

// guardrailExports checks a guardrail plugin's hook set: checkRequest
// and/or checkResponse, and no task hook.
func (v *validator) guardrailExports(m *Manifest, hooks HookSet) {
	found := false
	for _, h := range guardrailHooks {
		if v.functions.Has(h) {
			hooks[h] = struct{}{}
			found = true
		}
	}
	if !found {
		v.addf("exports."+HookCheckRequest, "a guardrail plugin exports checkRequest, checkResponse or both")
	}
	for h := range hooks {
		if !slices.Contains(guardrailHooks, h) {
			v.addf("exports."+h, "is a task plugin hook; a guardrail plugin exports only checkRequest and checkResponse")
		}
	}
}

// IsGuardrail reports a guardrail plugin.
func (m *Manifest) IsGuardrail() bool { return m.Kind == KindGuardrail }
