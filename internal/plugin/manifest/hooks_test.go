package manifest

import (
	"slices"
	"testing"
)

func TestRequiredCapabilities(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "supported capabilities", edit: set("requiredCapabilities", arr("json-clone@1", "submit-sse-delta@1"))},
		{name: "unknown capability", edit: set("requiredCapabilities", arr("task-submit-no-retry@1")),
			want: []string{"meta.requiredCapabilities[0]|not supported"}},
		{name: "wrong version", edit: set("requiredCapabilities", arr("json-clone@2")), want: []string{"meta.requiredCapabilities[0]"}},
		{name: "unversioned", edit: set("requiredCapabilities", arr("json-clone")), want: []string{"meta.requiredCapabilities[0]"}},
		{name: "a repeated capability is dropped", edit: set("requiredCapabilities", arr("json-clone@1", "json-clone@1")),
			check: listIs(func(m *Manifest) []string { return m.RequiredCapabilities }, "json-clone@1")},
	})
}

func TestRequiredCapabilitiesFollowTheHost(t *testing.T) {
	ex := baseExports()
	ex.Meta.(map[string]any)["requiredCapabilities"] = arr("json-clone@1")
	if _, problems := ValidateWith(ex, Options{Capabilities: []string{"submit-sse-delta@1"}}); len(problems) != 1 {
		t.Errorf("a host without json-clone@1 must reject it; problems = %v", problems)
	}
}

func TestSubmitResponseTypes(t *testing.T) {
	types := func(want ...string) func(*testing.T, *Manifest) {
		return func(t *testing.T, m *Manifest) {
			if !slices.Equal(m.SubmitResponseTypes, want) {
				t.Errorf("submitResponseTypes = %v, want %v", m.SubmitResponseTypes, want)
			}
		}
	}
	runCases(t, []ruleCase{
		{name: "empty list defaults to json", edit: set("submitResponseTypes", arr()), check: types("json")},
		{name: "json and sse", edit: all(set("submitResponseTypes", arr("json", "sse")), withFunctions("parseSubmitEvent")), check: types("json", "sse")},
		{name: "unknown type", edit: set("submitResponseTypes", arr("xml")), want: []string{"meta.submitResponseTypes[0]"}},
		{name: "a repeated type is dropped", edit: set("submitResponseTypes", arr("json", "json")),
			check: listIs(func(m *Manifest) []string { return m.SubmitResponseTypes }, "json")},
	})
}

func TestHookSet(t *testing.T) {
	sse := set("submitResponseTypes", arr("sse"))
	delta := set("requiredCapabilities", arr("submit-sse-delta@1"))
	batch := set("fetchMode", "batch")
	runCases(t, []ruleCase{
		{name: "missing always-required hooks", edit: withoutFunctions("buildSubmitRequest", "parseSubmitResponse", "parseTaskResult"),
			want: []string{"exports.buildSubmitRequest|required", "exports.parseSubmitResponse", "exports.parseTaskResult"}},
		{name: "per_task without buildQueryRequest", edit: withoutFunctions("buildQueryRequest"), want: []string{"exports.buildQueryRequest|per_task"}},
		{name: "batch without batch hooks", edit: all(batch, withoutFunctions("buildQueryRequest")),
			want: []string{"exports.buildBatchQueryRequest|batch", "exports.parseBatchResult|batch"}},
		{name: "batch keeping per-task hooks", edit: all(batch, withFunctions("buildBatchQueryRequest", "parseBatchResult"))},
		{name: "optional hooks", edit: withFunctions("parseSubmitError", "validatePreparedRequest", "sanitizeTaskData", "extractUsage",
			"extractUsageOnSubmit", "extractUsageOnComplete", "extractBillingOnComplete", "native.error")},
		{name: "artifact pair", edit: withFunctions("listArtifacts", "buildContentRequest")},
		{name: "listArtifacts alone", edit: withFunctions("listArtifacts"), want: []string{"exports.buildContentRequest|pair"}},
		{name: "buildContentRequest alone", edit: withFunctions("buildContentRequest"), want: []string{"exports.listArtifacts|pair"}},
		{name: "sse snapshot", edit: all(sse, withFunctions("parseSubmitEvent"))},
		{name: "sse delta with capability", edit: all(sse, delta, withFunctions("parseSubmitEventDelta"))},
		{name: "sse without event hook", edit: sse, want: []string{"exports.parseSubmitEvent|sse"}},
		{name: "delta without capability", edit: all(sse, withFunctions("parseSubmitEventDelta")),
			want: []string{"exports.parseSubmitEventDelta|submit-sse-delta@1", "exports.parseSubmitEvent|sse"}},
		{name: "draft exports", edit: withFunctions("resolveRequest", "renderError", "renderers.video"),
			want: []string{"exports.resolveRequest|draft", "exports.renderError|draft", "exports.renderers|draft"}},
		{name: "unknown export", edit: withFunctions("helper"), want: []string{"exports.helper|unknown export"}},
		{name: "default export", edit: withNames("default"), want: []string{"exports.default|unknown export"}},
		{name: "hook that is not a function", edit: withNames("extractUsage"), want: []string{"exports.extractUsage|must be a function"}},
		{name: "meta exported as a function", edit: withFunctions("meta"), want: []string{"exports.meta|not a function"}},
		{name: "nested native object", edit: withFunctions("native.group.fn"), want: []string{"exports.native.group.fn|directly"}},
	})
}

func TestHookSetListsRecognisedExports(t *testing.T) {
	ex := baseExports()
	meta := ex.Meta.(map[string]any)
	meta["protocols"] = arr("openai_video")
	ex.Functions = append(ex.Functions, "native.error", "protocols.openai_video.decodeRequest", "protocols.openai_video.render")
	ex.Names = topNames(ex.Functions, "meta")
	m, problems := Validate(ex)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	want := []string{"buildQueryRequest", "buildSubmitRequest", "native.error", "parseSubmitResponse", "parseTaskResult",
		"protocols.openai_video.decodeRequest", "protocols.openai_video.render"}
	if got := m.Hooks.List(); !slices.Equal(got, want) {
		t.Errorf("hooks = %v, want %v", got, want)
	}
	claim, _ := m.Protocol(ProtocolVideo)
	if claim.HookPath(HookRender) != "protocols.openai_video.render" {
		t.Errorf("HookPath = %q", claim.HookPath(HookRender))
	}
}

func TestEveryProblemIsCollected(t *testing.T) {
	runCases(t, []ruleCase{{
		name: "one problem per broken field",
		edit: all(set("key", "Bad Key", "version", "x", "fetchMode", "poll", "icon", "https://x/y.png", "channelTypes", arr(float64(61))),
			withoutFunctions("parseTaskResult"), withFunctions("renderError")),
		want: []string{"meta.key", "meta.version", "meta.fetchMode", "meta.icon", "meta.channelTypes[0]",
			"exports.parseTaskResult", "exports.renderError"},
	}})
}

func TestProblemsError(t *testing.T) {
	ps := Problems{{Path: "meta.key", Message: "bad"}, {Path: "meta.version", Message: "worse"}}
	if ps.Error() != "meta.key: bad; meta.version: worse" {
		t.Errorf("Error() = %q", ps.Error())
	}
	if Problems(nil).Err() != nil || ps.Err() == nil {
		t.Error("Err must be nil exactly when the list is empty")
	}
}
