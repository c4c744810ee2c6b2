package manifest

import (
	"encoding/json"
	"slices"
)

// Top-level hook names of API v1.
const (
	HookBuildSubmitRequest       = "buildSubmitRequest"
	HookParseSubmitResponse      = "parseSubmitResponse"
	HookParseSubmitError         = "parseSubmitError"
	HookValidatePreparedRequest  = "validatePreparedRequest"
	HookSanitizeTaskData         = "sanitizeTaskData"
	HookBuildQueryRequest        = "buildQueryRequest"
	HookParseTaskResult          = "parseTaskResult"
	HookBuildBatchQueryRequest   = "buildBatchQueryRequest"
	HookParseBatchResult         = "parseBatchResult"
	HookExtractUsage             = "extractUsage"
	HookExtractUsageOnSubmit     = "extractUsageOnSubmit"
	HookExtractUsageOnComplete   = "extractUsageOnComplete"
	HookExtractBillingOnComplete = "extractBillingOnComplete"
	HookListArtifacts            = "listArtifacts"
	HookBuildContentRequest      = "buildContentRequest"
	HookParseSubmitEvent         = "parseSubmitEvent"
	HookParseSubmitEventDelta    = "parseSubmitEventDelta"
)

// Protocol hook names (members of protocols.<name>).
const (
	HookDecodeRequest = "decodeRequest"
	HookRender        = "render"
	HookRenderEvents  = "renderEvents"
	HookRenderFinal   = "renderFinal"
)

// NativeErrorHook is the optional renderer of host errors on native routes.
const NativeErrorHook = "native.error"

// knownHooks are the top-level function exports API v1 defines.
var knownHooks = []string{
	HookBuildSubmitRequest, HookParseSubmitResponse, HookParseSubmitError,
	HookValidatePreparedRequest, HookSanitizeTaskData, HookBuildQueryRequest,
	HookParseTaskResult, HookBuildBatchQueryRequest, HookParseBatchResult,
	HookExtractUsage, HookExtractUsageOnSubmit, HookExtractUsageOnComplete,
	HookExtractBillingOnComplete, HookListArtifacts, HookBuildContentRequest,
	HookParseSubmitEvent, HookParseSubmitEventDelta,
}

// draftExports belonged to drafts of the contract; naming them explains the
// rejection better than "unknown export".
var draftExports = map[string]string{
	"resolveRequest": "draft export resolveRequest is not part of API v1; declare routes and protocols with decoders instead",
	"renderError":    "draft export renderError is not part of API v1; use native.error",
	"renderers":      "draft export renderers is not part of API v1; put renderers in native or protocols",
}

// HookSet is the set of a plugin's recognised exported function paths:
// top-level hooks, native functions and protocol hooks.
type HookSet map[string]struct{}

func newHookSet(paths ...string) HookSet {
	s := HookSet{}
	for _, p := range paths {
		s[p] = struct{}{}
	}
	return s
}

// Has reports whether the plugin exports the function at path.
func (s HookSet) Has(path string) bool {
	_, ok := s[path]
	return ok
}

// List returns the paths sorted.
func (s HookSet) List() []string {
	out := make([]string, 0, len(s))
	for p := range s {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// MarshalJSON encodes the set as a sorted array.
func (s HookSet) MarshalJSON() ([]byte, error) { return json.Marshal(s.List()) }
