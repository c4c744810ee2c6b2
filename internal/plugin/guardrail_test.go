package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

func guardrailSet(t *testing.T, r *Registry, config string) *guardrail.Set {
	t.Helper()
	set, err := guardrail.NewSet([]guardrail.Spec{{Name: "acme", Type: guardrail.TypePlugin, Config: json.RawMessage(config)}}, r)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestGuardrailPluginRunsOnTheTaskRuntime(t *testing.T) {
	r, _ := newTestRegistry(t)
	res := mustUpload(t, r, UploadRequest{Source: source(t, "guardrail.js")})
	if !res.Active {
		t.Fatalf("upload %+v", res)
	}
	for _, ref := range []string{"acme-guard", "Acme Guard"} {
		if err := r.CheckGuardrailPlugin(ref); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
	}
	mustUpload(t, r, UploadRequest{Source: source(t, "per_task.js")})
	if err := r.CheckGuardrailPlugin("acme-video"); err == nil || !strings.Contains(err.Error(), "task plugin") {
		t.Fatalf("a task plugin accepted as a guardrail: %v", err)
	}
	set := guardrailSet(t, r, `{"plugin":"acme-guard"}`)
	ctx := context.Background()
	// "😀" is two JavaScript indices: the plugin's offsets must land on "secret".
	text := "😀 the secret plan"
	v := set.Check(ctx, guardrail.Input{Call: guardrail.Call{Model: "m1"}, Stage: guardrail.StageRequest, Texts: []*string{&text}})
	if text != "😀 the [gone] plan" || v.Blocked != nil || v.Records[0].Action != "redact" {
		t.Fatalf("text %q verdict %+v", text, v)
	}
	text = "project falcon"
	v = set.Check(ctx, guardrail.Input{Call: guardrail.Call{Model: "m1"}, Stage: guardrail.StageRequest, Texts: []*string{&text}})
	if v.Blocked == nil || !strings.Contains(v.Blocked.Message(), "code name request m1") {
		t.Fatalf("verdict %+v", v)
	}
	// No checkResponse export: answers pass.
	text = "falcon"
	if v := set.Check(ctx, guardrail.Input{Stage: guardrail.StageResponse, Texts: []*string{&text}}); v.Blocked != nil || len(v.Records) != 0 {
		t.Fatalf("response verdict %+v", v)
	}
}

func TestGuardrailPluginThatThrowsOrLoopsFollowsOnError(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustUpload(t, r, UploadRequest{Source: source(t, "guardrail.js")})
	cases := []struct {
		text, config string
		block        bool
		action       string
	}{
		{"boom", `{"plugin":"acme-guard"}`, true, "block"},
		{"spin", `{"plugin":"acme-guard"}`, true, "block"},
		{"boom", `{"plugin":"acme-guard","on_error":"allow"}`, false, "allow"},
		{"spin", `{"plugin":"acme-guard","on_error":"allow"}`, false, "allow"},
	}
	for _, tc := range cases {
		set := guardrailSet(t, r, tc.config)
		text := tc.text
		start := time.Now()
		v := set.Check(context.Background(), guardrail.Input{Stage: guardrail.StageRequest, Texts: []*string{&text}})
		if (v.Blocked != nil) != tc.block || len(v.Records) != 1 || v.Records[0].Action != tc.action || v.Records[0].Matches["plugin_error"] != 1 {
			t.Errorf("%s %s: verdict %+v", tc.text, tc.config, v)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s: took %s, past the hook deadline", tc.text, took)
		}
	}
	// The runtime is still healthy: a normal call works after the loops.
	text := "fine"
	if v := guardrailSet(t, r, `{"plugin":"acme-guard"}`).Check(context.Background(), guardrail.Input{Stage: guardrail.StageRequest, Texts: []*string{&text}}); v.Blocked != nil {
		t.Fatalf("after the failures: %+v", v)
	}
	_, err := r.CheckText(context.Background(), "acme-guard", guardrail.HookCheckRequest, guardrail.PluginContext{Text: "spin"})
	if !errors.Is(err, ErrHookTimeout) {
		t.Fatalf("a looping hook: %v, want the hook timeout", err)
	}
}

func TestGuardrailPluginManifestRules(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"no check hook", `export const meta = {apiVersion:1, kind:"guardrail", key:"g", name:"G", version:"1.0.0", author:{name:"x"}}; export function other() {}`, "checkRequest"},
		{"task field", `export const meta = {apiVersion:1, kind:"guardrail", key:"g", name:"G", version:"1.0.0", author:{name:"x"}, models:["m"]}; export function checkRequest() {}`, "meta.models"},
		{"task hook", `export const meta = {apiVersion:1, kind:"guardrail", key:"g", name:"G", version:"1.0.0", author:{name:"x"}}; export function checkRequest() {} export function buildSubmitRequest() {}`, "buildSubmitRequest"},
		{"unknown kind", `export const meta = {apiVersion:1, kind:"filter", key:"g", name:"G", version:"1.0.0", author:{name:"x"}}; export function checkRequest() {}`, "meta.kind"},
	}
	for _, tc := range cases {
		_, problems := prepare("g.js", tc.src)
		if len(problems) == 0 || !strings.Contains(problems.Error(), tc.want) {
			t.Errorf("%s: problems %v, want one naming %s", tc.name, problems, tc.want)
		}
	}
}
