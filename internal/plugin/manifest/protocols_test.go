package manifest

import (
	"slices"
	"strings"
	"testing"
)

func videoHooks(key string) edit {
	return withFunctions("protocols."+key+".decodeRequest", "protocols."+key+".render")
}

func responsesHooks(key string, hooks ...string) edit {
	paths := []string{"protocols." + key + ".decodeRequest"}
	for _, h := range hooks {
		paths = append(paths, "protocols."+key+"."+h)
	}
	return withFunctions(paths...)
}

func responses(modes ...any) obj { return obj{"name": "std_responses", "supports": arr(modes...)} }

func TestProtocolClaims(t *testing.T) {
	claim := func(want ProtocolClaim) func(*testing.T, *Manifest) {
		return func(t *testing.T, m *Manifest) {
			got, ok := m.Protocol(want.Name)
			if !ok || got.ExportKey != want.ExportKey || !slices.Equal(got.Models, want.Models) || !slices.Equal(got.Supports, want.Supports) {
				t.Errorf("claim = %+v, want %+v", got, want)
			}
		}
	}
	runCases(t, []ruleCase{
		{name: "std_video string", edit: all(set("protocols", arr("std_video")), videoHooks("std_video")),
			check: claim(ProtocolClaim{Name: ProtocolVideo, ExportKey: "std_video"})},
		{name: "openai_video alias", edit: all(set("protocols", arr("openai_video")), videoHooks("openai_video")),
			check: claim(ProtocolClaim{Name: ProtocolVideo, ExportKey: "openai_video"})},
		{name: "hooks under the other spelling", edit: all(set("protocols", arr("std_video")), videoHooks("openai_video")),
			check: claim(ProtocolClaim{Name: ProtocolVideo, ExportKey: "openai_video"})},
		{name: "std_image object with models", edit: all(set("protocols", arr(obj{"name": "openai_image", "models": arr("m2")})), videoHooks("openai_image")),
			check: claim(ProtocolClaim{Name: ProtocolImage, ExportKey: "openai_image", Models: []string{"m2"}})},
		{name: "openai_responses object", edit: all(set("protocols", arr(obj{"name": "openai_responses", "supports": arr("stream", "sync")})),
			responsesHooks("openai_responses", "renderEvents", "renderFinal")),
			check: claim(ProtocolClaim{Name: ProtocolResponses, ExportKey: "openai_responses", Supports: []string{"stream", "sync"}})},
		{name: "bare std_responses", edit: set("protocols", arr("std_responses")), want: []string{"meta.protocols[0]|supports"}},
		{name: "bare openai_responses without render hooks cannot be inferred", edit: all(set("protocols", arr("openai_responses")), responsesHooks("openai_responses")),
			want: []string{"meta.protocols[0]|infer"}},
		{name: "responses without supports", edit: set("protocols", arr(obj{"name": "std_responses"})), want: []string{"meta.protocols[0].supports|required"}},
		{name: "responses with empty supports", edit: set("protocols", arr(responses())), want: []string{"meta.protocols[0].supports|at least one"}},
		{name: "responses with unknown mode", edit: set("protocols", arr(responses("poll"))), want: []string{"meta.protocols[0].supports[0]"}},
		{name: "responses with repeated mode keeps one", edit: all(set("protocols", arr(responses("sync", "sync"))), responsesHooks("std_responses", "renderFinal")),
			check: claim(ProtocolClaim{Name: ProtocolResponses, ExportKey: "std_responses", Supports: []string{"sync"}})},
		{name: "supports on video", edit: all(set("protocols", arr(obj{"name": "std_video", "supports": arr("sync")})), videoHooks("std_video")),
			want: []string{"meta.protocols[0].supports|only allowed on std_responses"}},
		{name: "unknown protocol", edit: set("protocols", arr("std_audio")), want: []string{"meta.protocols[0]|unknown protocol"}},
		{name: "unknown claim field", edit: all(set("protocols", arr(obj{"name": "std_video", "timeout": float64(3)})), videoHooks("std_video")),
			want: []string{"meta.protocols[0].timeout|unknown"}},
		{name: "claim without name", edit: set("protocols", arr(obj{"models": arr("m1")})), want: []string{"meta.protocols[0].name|required"}},
		{name: "duplicate claim across spellings", edit: all(set("protocols", arr("std_video", "openai_video")), videoHooks("std_video")),
			want: []string{"meta.protocols[1]|second time"}},
		{name: "claim model outside meta.models is a limit SPEC allows", edit: all(set("protocols", arr(obj{"name": "std_video", "models": arr("m9")})), videoHooks("std_video")),
			check: claim(ProtocolClaim{Name: ProtocolVideo, ExportKey: "std_video", Models: []string{"m9"}})},
		{name: "claim with empty models", edit: all(set("protocols", arr(obj{"name": "std_video", "models": arr()})), videoHooks("std_video")),
			want: []string{"meta.protocols[0].models|empty"}},
		{name: "protocols not an array", edit: set("protocols", "std_video"), want: []string{"meta.protocols|array"}},
	})
}

func TestProtocolHookSetIsExact(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "video missing render", edit: all(set("protocols", arr("std_video")), withFunctions("protocols.std_video.decodeRequest")),
			want: []string{"exports.protocols.std_video.render|std_video claim"}},
		{name: "image missing both hooks", edit: set("protocols", arr("openai_image")),
			want: []string{"exports.protocols.openai_image.decodeRequest", "exports.protocols.openai_image.render"}},
		{name: "video with a responses hook", edit: all(set("protocols", arr("std_video")), videoHooks("std_video"), withFunctions("protocols.std_video.renderFinal")),
			want: []string{"exports.protocols.std_video.renderFinal|not a std_video hook"}},
		{name: "stream needs renderEvents", edit: all(set("protocols", arr(responses("stream"))), responsesHooks("std_responses")),
			want: []string{"exports.protocols.std_responses.renderEvents|stream mode"}},
		{name: "background needs renderFinal", edit: all(set("protocols", arr(responses("background"))), responsesHooks("std_responses")),
			want: []string{"exports.protocols.std_responses.renderFinal|background mode"}},
		{name: "sync only with unused renderEvents", edit: all(set("protocols", arr(responses("sync"))), responsesHooks("std_responses", "renderFinal", "renderEvents")),
			want: []string{"exports.protocols.std_responses.renderEvents|not used by any declared mode"}},
		{name: "stream only with unused renderFinal", edit: all(set("protocols", arr(responses("stream"))), responsesHooks("std_responses", "renderEvents", "renderFinal")),
			want: []string{"exports.protocols.std_responses.renderFinal|not used"}},
		{name: "responses missing decodeRequest", edit: all(set("protocols", arr(responses("sync"))), withFunctions("protocols.std_responses.renderFinal")),
			want: []string{"exports.protocols.std_responses.decodeRequest|required"}},
		{name: "hooks for an undeclared protocol", edit: videoHooks("std_video"),
			want: []string{"exports.protocols.std_video|does not claim"}},
		{name: "hooks for an unknown protocol", edit: withFunctions("protocols.std_audio.render"),
			want: []string{"exports.protocols.std_audio|unknown protocol"}},
		{name: "both spellings exported", edit: all(set("protocols", arr("std_video")), videoHooks("std_video"), videoHooks("openai_video")),
			want: []string{"exports.protocols|both"}},
		{name: "protocol entry is a function", edit: withFunctions("protocols.std_video"),
			want: []string{"exports.protocols.std_video|object of protocol hooks"}},
	})
}

// TestBareOpenAIResponsesInfersModes covers the marketplace's legacy claim
// (CONTRACT.md, under the alias table): the modes come from the render hooks.
func TestBareOpenAIResponsesInfersModes(t *testing.T) {
	inferred := func(exportKey string, modes ...string) func(*testing.T, *Manifest) {
		return func(t *testing.T, m *Manifest) {
			got, ok := m.Protocol(ProtocolResponses)
			if !ok || got.ExportKey != exportKey || !slices.Equal(got.Supports, modes) {
				t.Errorf("claim = %+v, want supports %v under %s", got, modes, exportKey)
			}
			if len(m.Inferred) != 1 || m.Inferred[0].Path != "meta.protocols[0]" || !slices.Equal(m.Inferred[0].Supports, modes) {
				t.Fatalf("inferred = %+v, want one entry for meta.protocols[0] with %v", m.Inferred, modes)
			}
			for _, mode := range modes {
				if !strings.Contains(m.Inferred[0].Message, mode) {
					t.Errorf("inference message %q does not name %s", m.Inferred[0].Message, mode)
				}
			}
		}
	}
	bare := set("protocols", arr("openai_responses"))
	runCases(t, []ruleCase{
		{name: "both render hooks give every mode", edit: all(bare, responsesHooks("openai_responses", "renderEvents", "renderFinal")),
			check: inferred("openai_responses", ModeStream, ModeSync, ModeBackground)},
		{name: "renderEvents alone gives stream", edit: all(bare, responsesHooks("openai_responses", "renderEvents")),
			check: inferred("openai_responses", ModeStream)},
		{name: "renderFinal alone gives sync and background", edit: all(bare, responsesHooks("openai_responses", "renderFinal")),
			check: inferred("openai_responses", ModeSync, ModeBackground)},
		{name: "hooks under the SPEC spelling are found", edit: all(bare, responsesHooks("std_responses", "renderFinal")),
			check: inferred("std_responses", ModeSync, ModeBackground)},
		{name: "bare std_responses stays refused even with hooks", edit: all(set("protocols", arr("std_responses")), responsesHooks("std_responses", "renderFinal")),
			want: []string{"meta.protocols[0]|object"}},
	})
}

func TestObjectClaimsInferNothing(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "object form", edit: all(set("protocols", arr(responses("sync", "background"))), responsesHooks("std_responses", "renderFinal")),
			check: func(t *testing.T, m *Manifest) {
				if len(m.Inferred) != 0 {
					t.Errorf("inferred = %+v for a declared supports list", m.Inferred)
				}
			}},
	})
}
