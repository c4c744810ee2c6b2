package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// GuardrailDeps is what the guardrail administration needs beyond the
// store: the engine whose set it rebuilds after each change, and a check
// that a plugin guardrail names an installed guardrail plugin.
type GuardrailDeps struct {
	Engine *guardrail.Engine
	// PluginRunner runs guardrail plugins for dry runs of unsaved specs.
	PluginRunner guardrail.PluginRunner
	// CheckPlugin refuses a plugin key that is not an installed guardrail
	// plugin; nil accepts any.
	CheckPlugin func(key string) error
}

// guardrailFields are the members of a guardrail body (CONTRACT §21).
var guardrailFields = []string{"name", "type", "config", "stages", "mode", "applies_to"}

func (a *API) routeGuardrails(mux *http.ServeMux) {
	a.route(mux, "GET /api/guardrails", store.RoleRoot, "guardrail", a.listGuardrails)
	a.route(mux, "POST /api/guardrails", store.RoleRoot, "guardrail", a.createGuardrail)
	a.route(mux, "POST /api/guardrails/dry-run", store.RoleRoot, "guardrail", a.dryRunGuardrail)
	a.route(mux, "GET /api/guardrails/{id}", store.RoleRoot, "guardrail", a.getGuardrail)
	a.route(mux, "PATCH /api/guardrails/{id}", store.RoleRoot, "guardrail", a.patchGuardrail)
	a.route(mux, "DELETE /api/guardrails/{id}", store.RoleRoot, "guardrail", a.deleteGuardrail)
}

func (a *API) listGuardrails(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	specs, err := guardrail.StoreSource{Repo: a.d.Store.Guardrails()}.ListGuardrails(r.Context())
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, newList(pageOf(specs, page), len(specs)))
	return nil
}

// findGuardrail takes the path's {id}: a numeric id or a guardrail's name.
func (a *API) findGuardrail(ctx context.Context, ref string) (guardrail.Spec, error) {
	repo := a.d.Store.Guardrails()
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		row, err := repo.Get(ctx, id)
		if err != nil {
			return guardrail.Spec{}, err
		}
		return guardrail.FromStore(*row)
	}
	rows, err := repo.List(ctx)
	if err != nil {
		return guardrail.Spec{}, err
	}
	for _, row := range rows {
		if row.Name == ref {
			return guardrail.FromStore(row)
		}
	}
	return guardrail.Spec{}, notFound("guardrail")
}

func (a *API) getGuardrail(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	s, err := a.findGuardrail(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, s)
	return nil
}

func (a *API) createGuardrail(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	f, err := readFields(w, r, guardrailFields...)
	if err != nil {
		return err
	}
	var s guardrail.Spec
	if err := applyGuardrailFields(f, &s); err != nil {
		return err
	}
	return a.saveGuardrail(w, r.Context(), &s, true)
}

func (a *API) patchGuardrail(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	s, err := a.findGuardrail(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	f, err := readFields(w, r, guardrailFields...)
	if err != nil {
		return err
	}
	if err := applyGuardrailFields(f, &s); err != nil {
		return err
	}
	return a.saveGuardrail(w, r.Context(), &s, false)
}

func (a *API) deleteGuardrail(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	s, err := a.findGuardrail(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := a.d.Store.Guardrails().Delete(r.Context(), s.ID); err != nil {
		return err
	}
	if err := a.reloadGuardrails(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, deleted{ID: s.ID, Deleted: true})
	return nil
}

// applyGuardrailFields copies the members sent onto s (PATCH keeps the
// others).
func applyGuardrailFields(f fields, s *guardrail.Spec) error {
	if _, err := get(f, "name", &s.Name); err != nil {
		return err
	}
	if _, err := get(f, "type", &s.Type); err != nil {
		return err
	}
	if _, err := get(f, "mode", &s.Mode); err != nil {
		return err
	}
	if _, err := getList(f, "stages", &s.Stages); err != nil {
		return err
	}
	if f.has("config") {
		if f.isNull("config") {
			s.Config = nil
		} else if cfg := strings.TrimSpace(string(f["config"])); !strings.HasPrefix(cfg, "{") {
			return badField("config", "must be an object")
		} else {
			s.Config = json.RawMessage(cfg)
		}
	}
	if f.has("applies_to") && !f.isNull("applies_to") {
		var scope guardrail.Scope
		dec := json.NewDecoder(strings.NewReader(string(f["applies_to"])))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&scope); err != nil {
			return badField("applies_to", "must be an object of groups and models (names), keys and teams (ids)")
		}
		s.AppliesTo = scope
	} else if f.has("applies_to") {
		s.AppliesTo = guardrail.Scope{}
	}
	return nil
}

// saveGuardrail validates s whole, stores it and rebuilds the live set, so
// the next call is checked by it.
func (a *API) saveGuardrail(w http.ResponseWriter, ctx context.Context, s *guardrail.Spec, create bool) error {
	cfg, problems := s.Normalize()
	if len(problems) == 0 && s.Type == guardrail.TypePlugin && a.d.Guardrails.CheckPlugin != nil {
		if err := a.d.Guardrails.CheckPlugin(cfg.Plugin); err != nil {
			problems = append(problems, "config.plugin: "+err.Error())
		}
	}
	if len(problems) > 0 {
		return badRequest("%s", strings.Join(problems, "; "))
	}
	row := s.ToStore()
	var err error
	if create {
		err = a.d.Store.Guardrails().Create(ctx, &row)
	} else {
		err = a.d.Store.Guardrails().Update(ctx, &row)
	}
	if err != nil {
		return err
	}
	if err := a.reloadGuardrails(ctx); err != nil {
		return err
	}
	saved, err := guardrail.FromStore(row)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, saved)
	return nil
}

func (a *API) reloadGuardrails(ctx context.Context) error {
	if a.d.Guardrails.Engine == nil {
		return nil
	}
	return a.d.Guardrails.Engine.Reload(ctx)
}
