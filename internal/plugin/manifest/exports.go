package manifest

import (
	"slices"
	"strings"
)

// exports checks the module's exports: the top-level names, the hooks the
// manifest makes mandatory, the native object and the protocol hooks.
func (v *validator) exports(m *Manifest, ex Exports) {
	hooks := newHookSet()
	protocolExports := map[string][]string{}
	for _, name := range topLevelNames(ex) {
		v.topLevelExport(name, hooks)
	}
	for _, f := range sortedUnique(ex.Functions) {
		v.memberExport(f, hooks, protocolExports)
	}
	if m.IsGuardrail() {
		v.guardrailExports(m, hooks)
		m.Hooks = hooks
		return
	}
	v.requiredHooks(m)
	v.protocolHooks(m, protocolExports)
	m.Hooks = hooks
}

// topLevelNames is every top-level export, named directly or implied by a
// function path.
func topLevelNames(ex Exports) []string {
	names := slices.Clone(ex.Names)
	for _, f := range ex.Functions {
		top, _, _ := strings.Cut(f, ".")
		names = append(names, top)
	}
	return sortedUnique(names)
}

func sortedUnique(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

func (v *validator) topLevelExport(name string, hooks HookSet) {
	path := "exports." + name
	switch {
	case name == "meta" || name == "native" || name == "protocols":
		if v.functions.Has(name) {
			v.addf(path, "must be an object, not a function")
		}
	case slices.Contains(knownHooks, name):
		if v.functions.Has(name) {
			hooks[name] = struct{}{}
		} else {
			v.addf(path, "must be a function")
		}
	case slices.Contains(guardrailHooks, name) && v.kind == KindGuardrail:
		if !v.functions.Has(name) {
			v.addf(path, "must be a function")
		}
	case draftExports[name] != "":
		v.addf(path, "%s", draftExports[name])
	default:
		v.addf(path, "unknown export; API v1 modules export meta, native, protocols and the hook functions")
	}
}

// memberExport files a nested function path (native.x, protocols.p.h).
func (v *validator) memberExport(f string, hooks HookSet, protocolExports map[string][]string) {
	parts := strings.Split(f, ".")
	path := "exports." + f
	switch {
	case len(parts) < 2:
		return
	case parts[0] == "native" && len(parts) == 2:
		hooks[f] = struct{}{}
	case parts[0] == "native":
		v.addf(path, "native must hold functions directly, not nested objects")
	case parts[0] == "protocols" && len(parts) == 3:
		hooks[f] = struct{}{}
		protocolExports[parts[1]] = append(protocolExports[parts[1]], parts[2])
	case parts[0] == "protocols" && len(parts) == 2:
		v.addf(path, "must be an object of protocol hooks, not a function")
	case parts[0] == "protocols":
		v.addf(path, "protocol hooks must be functions directly inside protocols.<name>")
	}
}

// requiredHooks enforces the hook set the manifest implies.
func (v *validator) requiredHooks(m *Manifest) {
	required := []string{HookBuildSubmitRequest, HookParseSubmitResponse, HookParseTaskResult}
	switch {
	case v.fetchModeOK && m.FetchMode == FetchPerTask:
		required = append(required, HookBuildQueryRequest)
	case v.fetchModeOK && m.FetchMode == FetchBatch:
		required = append(required, HookBuildBatchQueryRequest, HookParseBatchResult)
	}
	for _, hook := range required {
		if !v.functions.Has(hook) {
			v.addf("exports."+hook, "is required%s", requiredReason(hook, m.FetchMode))
		}
	}
	artifacts, content := v.functions.Has(HookListArtifacts), v.functions.Has(HookBuildContentRequest)
	if artifacts && !content {
		v.addf("exports."+HookBuildContentRequest, "is required because listArtifacts is exported; the two come as a pair")
	}
	if content && !artifacts {
		v.addf("exports."+HookListArtifacts, "is required because buildContentRequest is exported; the two come as a pair")
	}
	v.sseHooks(m)
}

func requiredReason(hook, fetchMode string) string {
	switch hook {
	case HookBuildQueryRequest, HookBuildBatchQueryRequest, HookParseBatchResult:
		return " for fetchMode " + fetchMode
	}
	return ""
}

// sseHooks checks the SSE submit hooks against submitResponseTypes and the
// delta capability.
func (v *validator) sseHooks(m *Manifest) {
	deltaCap := m.HasCapability(CapabilitySubmitSSEDelta)
	snapshot, delta := v.functions.Has(HookParseSubmitEvent), v.functions.Has(HookParseSubmitEventDelta)
	if delta && !deltaCap {
		v.addf("exports."+HookParseSubmitEventDelta, "requires %s in meta.requiredCapabilities", CapabilitySubmitSSEDelta)
	}
	if slices.Contains(m.SubmitResponseTypes, "sse") && !snapshot && !(delta && deltaCap) {
		v.addf("exports."+HookParseSubmitEvent,
			"is required because submitResponseTypes includes sse (or parseSubmitEventDelta with %s)", CapabilitySubmitSSEDelta)
	}
}
