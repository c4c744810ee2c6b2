package manifest

import (
	"fmt"
	"strings"
)

// legacyResponsesName is the ecosystem spelling every published marketplace
// plugin writes as a bare string. CONTRACT.md accepts exactly this bare form
// and infers its modes; the SPEC spelling std_responses stays object-only.
const legacyResponsesName = "openai_responses"

// Inference records a value the host filled in for the plugin rather than
// read from meta, so the upload, dry-run and check answers can say so.
type Inference struct {
	Path     string   `json:"path"`
	Protocol string   `json:"protocol"`
	Supports []string `json:"supports"`
	Message  string   `json:"message"`
}

// String renders the inference as "path: message".
func (i Inference) String() string { return i.Path + ": " + i.Message }

// inferSupports turns a bare "openai_responses" claim into the object form:
// renderEvents serves stream, renderFinal serves sync and background. The
// hooks may sit under either spelling of the protocol (claimHooks reports a
// plugin that uses both), so both are looked at.
func (v *validator) inferSupports(path, spelling string) (ProtocolClaim, bool) {
	var modes []string
	if v.exportsResponsesHook(HookRenderEvents) {
		modes = append(modes, ModeStream)
	}
	if v.exportsResponsesHook(HookRenderFinal) {
		modes = append(modes, ModeSync, ModeBackground)
	}
	if len(modes) == 0 {
		v.addf(path, "%s declared as a bare string needs protocols.%s.renderEvents or renderFinal to infer its modes from; "+
			"export them or declare {name, supports: [...]}", spelling, spelling)
		return ProtocolClaim{}, false
	}
	v.inferred = append(v.inferred, Inference{
		Path: path, Protocol: ProtocolResponses, Supports: modes,
		Message: fmt.Sprintf("%s declared as a bare string; supports inferred from the exported render hooks: %s",
			spelling, strings.Join(modes, ", ")),
	})
	return ProtocolClaim{Name: ProtocolResponses, ExportKey: spelling, Supports: modes}, true
}

func (v *validator) exportsResponsesHook(hook string) bool {
	for spelling, name := range protocolAliases {
		if name == ProtocolResponses && v.functions.Has("protocols."+spelling+"."+hook) {
			return true
		}
	}
	return false
}
