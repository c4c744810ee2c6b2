package admin

import (
	"encoding/json"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// maxDryRunText bounds a dry run's sample: the check is the real one, on
// the request path's budget, not a bulk scanner.
const maxDryRunText = 256 << 10

// dryRunResult is what a dry run answers: whether the text would be
// blocked and by which guardrail, the text as it would go on, and what each
// guardrail found (the usage row's other.guardrails).
type dryRunResult struct {
	Blocked    bool               `json:"blocked"`
	BlockedBy  string             `json:"blocked_by,omitempty"`
	Message    string             `json:"message,omitempty"`
	Redacted   bool               `json:"redacted"`
	Text       string             `json:"text"`
	Guardrails []guardrail.Record `json:"guardrails"`
}

// dryRunGuardrail checks a sample text (POST /api/guardrails/dry-run):
// with "guardrail", an unsaved definition; with "name", one stored
// guardrail; with neither, every stored guardrail that applies to the
// "model" and "group" given. Nothing is stored and no upstream is called.
func (a *API) dryRunGuardrail(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	f, err := readFields(w, r, "text", "stage", "model", "group", "guardrail", "name")
	if err != nil {
		return err
	}
	var text, stage, name string
	call := guardrail.Call{}
	if ok, err := get(f, "text", &text); err != nil || !ok {
		return badField("text", "is required: the sample to check")
	}
	if len(text) > maxDryRunText {
		return badField("text", "must be at most %d bytes", maxDryRunText)
	}
	stage = guardrail.StageRequest
	for _, m := range []struct {
		name string
		dst  *string
	}{{"stage", &stage}, {"model", &call.Model}, {"group", &call.Group}, {"name", &name}} {
		if _, err := get(f, m.name, m.dst); err != nil {
			return err
		}
	}
	if stage != guardrail.StageRequest && stage != guardrail.StageResponse {
		return badField("stage", "must be request or response")
	}
	set, err := a.dryRunSet(r, f, name)
	if err != nil {
		return err
	}
	v, out := set.DryRun(r.Context(), call, stage, text)
	res := dryRunResult{Redacted: v.Redacted, Text: out, Guardrails: v.Records}
	if res.Guardrails == nil {
		res.Guardrails = []guardrail.Record{}
	}
	if v.Blocked != nil {
		res.Blocked, res.BlockedBy, res.Message, res.Text = true, v.Blocked.Name, v.Blocked.Message(), text
	}
	apijson.Write(w, http.StatusOK, res)
	return nil
}

// dryRunSet is the set a dry run checks with.
func (a *API) dryRunSet(r *http.Request, f fields, name string) (*guardrail.Set, error) {
	runner := a.d.Guardrails.PluginRunner
	switch {
	case f.has("guardrail"):
		var spec guardrail.Spec
		sub, err := parseFields(f["guardrail"], guardrailFields)
		if err != nil {
			return nil, badField("guardrail", "must be a guardrail definition: %s", err.Error())
		}
		if err := applyGuardrailFields(sub, &spec); err != nil {
			return nil, err
		}
		if _, problems := spec.Normalize(); len(problems) > 0 {
			raw, _ := json.Marshal(problems)
			return nil, badField("guardrail", "is not valid: %s", raw)
		}
		set, err := guardrail.NewSet([]guardrail.Spec{spec}, runner)
		return set, err
	case name != "":
		spec, err := a.findGuardrail(r.Context(), name)
		if err != nil {
			return nil, err
		}
		return guardrail.NewSet([]guardrail.Spec{spec}, runner)
	case a.d.Guardrails.Engine != nil:
		return a.d.Guardrails.Engine.Set(), nil
	}
	return guardrail.NewSet(nil, runner)
}
