package manifest

import (
	"slices"
	"strings"
)

// protocolAliases maps every accepted protocol spelling to its canonical
// name: the SPEC names and the ones the plugin marketplace uses.
var protocolAliases = map[string]string{
	ProtocolVideo:      ProtocolVideo,
	"openai_video":     ProtocolVideo,
	ProtocolResponses:  ProtocolResponses,
	"openai_responses": ProtocolResponses,
	ProtocolImage:      ProtocolImage,
	"openai_image":     ProtocolImage,
}

// CanonicalProtocol returns the canonical name of a protocol spelling.
func CanonicalProtocol(name string) (string, bool) {
	c, ok := protocolAliases[name]
	return c, ok
}

var responseModes = []string{ModeStream, ModeSync, ModeBackground}

func (v *validator) protocols(m *Manifest, path string, value any) {
	items, ok := arrayOf(value)
	if !ok {
		v.addf(path, "must be an array of protocol claims, got %s", kindOf(value))
		v.protocolsOK = false
		return
	}
	start := v.count()
	for i, item := range items {
		claim, ok := v.protocolClaim(at(path, i), item)
		if !ok {
			continue
		}
		if _, dup := m.Protocol(claim.Name); dup {
			v.addf(at(path, i), "claims %s a second time", claim.Name)
			continue
		}
		m.Protocols = append(m.Protocols, claim)
	}
	v.protocolsOK = v.count() == start
}

func (v *validator) protocolClaim(path string, item any) (ProtocolClaim, bool) {
	if s, ok := item.(string); ok {
		name, known := protocolAliases[s]
		switch {
		case !known:
			v.addf(path, "unknown protocol %q; use std_video, std_image or std_responses", s)
		case name == ProtocolResponses && s == legacyResponsesName:
			return v.inferSupports(path, s)
		case name == ProtocolResponses:
			v.addf(path, "%s must be declared as an object {name, supports: [...]}", s)
		default:
			return ProtocolClaim{Name: name, ExportKey: s}, true
		}
		return ProtocolClaim{}, false
	}
	obj, ok := objectOf(item)
	if !ok {
		v.addf(path, "must be a protocol name or an object {name, models?, supports?}, got %s", kindOf(item))
		return ProtocolClaim{}, false
	}
	start := v.count()
	v.rejectUnknown(path, obj, "name", "models", "supports")
	var claim ProtocolClaim
	if raw, present := obj["name"]; !present {
		v.addf(dot(path, "name"), "is required")
	} else if s, ok := v.stringValue(dot(path, "name"), raw); ok {
		if name, known := protocolAliases[s]; known {
			claim = ProtocolClaim{Name: name, ExportKey: s}
		} else {
			v.addf(dot(path, "name"), "unknown protocol %q; use std_video, std_image or std_responses", s)
		}
	}
	v.claimSupports(path, obj, &claim)
	if raw, present := obj["models"]; present {
		claim.Models = v.modelLimit(dot(path, "models"), raw)
	}
	return claim, v.count() == start
}

// claimSupports checks `supports`: required and non-empty for std_responses,
// absent for the protocols that have no request modes.
func (v *validator) claimSupports(path string, obj map[string]any, claim *ProtocolClaim) {
	fieldPath := dot(path, "supports")
	raw, present := obj["supports"]
	switch {
	case claim.Name == ProtocolResponses && !present:
		v.addf(fieldPath, "is required for %s: list the modes it serves (stream, sync, background)", claim.ExportKey)
	case claim.Name == ProtocolResponses:
		modes, ok := v.stringList(fieldPath, raw, dropDuplicates, func(p, s string) (string, bool) {
			if !slices.Contains(responseModes, s) {
				v.addf(p, "must be stream, sync or background")
				return "", false
			}
			return s, true
		})
		if ok && len(modes) == 0 {
			v.addf(fieldPath, "must list at least one mode")
		}
		claim.Supports = modes
	case present && claim.Name != "":
		v.addf(fieldPath, "is only allowed on std_responses; %s has no request modes", claim.ExportKey)
	}
}

// requiredProtocolHooks maps each hook a claim needs to the reason it is
// needed.
func requiredProtocolHooks(c ProtocolClaim) map[string]string {
	if c.Name != ProtocolResponses {
		return map[string]string{
			HookDecodeRequest: "the " + c.Name + " claim",
			HookRender:        "the " + c.Name + " claim",
		}
	}
	hooks := map[string]string{HookDecodeRequest: "the std_responses claim"}
	for _, mode := range c.Supports {
		hook := HookRenderFinal
		if mode == ModeStream {
			hook = HookRenderEvents
		}
		if _, seen := hooks[hook]; !seen {
			hooks[hook] = "the " + mode + " mode of the std_responses claim"
		}
	}
	return hooks
}

// protocolHooks checks the `protocols` export against the claims, exactly
// both ways: every needed hook exists and every exported hook is used.
func (v *validator) protocolHooks(m *Manifest, exported map[string][]string) {
	keys := make([]string, 0, len(exported))
	for k := range exported {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name, known := protocolAliases[k]
		switch {
		case !known:
			v.addf("exports.protocols."+k, "unknown protocol; use std_video, std_image or std_responses")
		case v.protocolsOK:
			if _, claimed := m.Protocol(name); !claimed {
				v.addf("exports.protocols."+k, "hooks exported for %s, which meta.protocols does not claim", name)
			}
		}
	}
	if !v.protocolsOK {
		return
	}
	for i := range m.Protocols {
		v.claimHooks(&m.Protocols[i], keys, exported)
	}
}

func (v *validator) claimHooks(c *ProtocolClaim, keys []string, exported map[string][]string) {
	var spellings []string
	for _, k := range keys {
		if protocolAliases[k] == c.Name {
			spellings = append(spellings, k)
		}
	}
	if len(spellings) > 1 {
		v.addf("exports.protocols", "hooks for %s are exported under both %s; use one spelling",
			c.Name, strings.Join(spellings, " and "))
		return
	}
	if len(spellings) == 1 {
		c.ExportKey = spellings[0]
	}
	required := requiredProtocolHooks(*c)
	have := exported[c.ExportKey]
	for _, hook := range []string{HookDecodeRequest, HookRender, HookRenderEvents, HookRenderFinal} {
		if reason, need := required[hook]; need && !slices.Contains(have, hook) {
			v.addf("exports."+c.HookPath(hook), "is required by %s", reason)
		}
	}
	for _, hook := range have {
		if _, need := required[hook]; need {
			continue
		}
		if c.Name == ProtocolResponses && (hook == HookRenderEvents || hook == HookRenderFinal) {
			v.addf("exports."+c.HookPath(hook), "is not used by any declared mode (supports: %s)", strings.Join(c.Supports, ", "))
		} else {
			v.addf("exports."+c.HookPath(hook), "is not a %s hook", c.Name)
		}
	}
}
