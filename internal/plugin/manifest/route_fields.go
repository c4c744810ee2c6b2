package manifest

import "strings"

// routeHooks checks decode and render: which route types need them and that
// they name functions of the plugin's native export.
func (v *validator) routeHooks(path string, obj map[string]any, r *Route) {
	decodePath := dot(path, "decode")
	raw, present := obj["decode"]
	switch {
	case present && r.Type == RouteQuery:
		v.addf(decodePath, "must not be set on query routes")
	case !present && (r.Type == RouteSubmit || r.Type == RouteDynamic):
		v.addf(decodePath, "is required for %s routes", r.Type)
	case present:
		r.Decode = v.nativeFunction(decodePath, raw)
	}
	raw, present = obj["render"]
	if !present {
		v.addf(dot(path, "render"), "is required")
		return
	}
	r.Render = v.nativeFunction(dot(path, "render"), raw)
}

// nativeFunction checks that value names a function exported in `native`.
func (v *validator) nativeFunction(path string, value any) string {
	s, ok := v.stringValue(path, value)
	if !ok {
		return ""
	}
	if !v.functions.Has("native." + s) {
		v.addf(path, "names native.%s, which the plugin does not export as a function", s)
		return ""
	}
	return s
}

// routeQueryFields handles taskIdParam, which only query routes have. The
// parameter may be a path parameter or a query-string parameter (the host
// reads the path first, then the query string), so it need not appear in
// the path.
func (v *validator) routeQueryFields(path string, obj map[string]any, r *Route) {
	fieldPath := dot(path, "taskIdParam")
	raw, present := obj["taskIdParam"]
	if present && r.Type != RouteQuery {
		if r.Type != "" {
			v.addf(fieldPath, "is only allowed on query routes")
		}
		return
	}
	if r.Type != RouteQuery {
		return
	}
	name := DefaultTaskIDParam
	if present {
		s, ok := v.stringValue(fieldPath, raw)
		if !ok {
			return
		}
		if s == "" {
			v.addf(fieldPath, "must not be empty; omit it for the default %s", DefaultTaskIDParam)
			return
		}
		name = s
	}
	r.TaskIDParam = name
}

// routeSubmitFields handles models, retainResult and action, which belong to
// submit and dynamic routes.
func (v *validator) routeSubmitFields(path string, obj map[string]any, r *Route) {
	submitting := r.Type == RouteSubmit || r.Type == RouteDynamic
	for _, name := range []string{"models", "retainResult"} {
		if _, present := obj[name]; present && r.Type == RouteQuery {
			v.addf(dot(path, name), "must not be set on query routes")
		}
	}
	if raw, present := obj["models"]; present && submitting {
		r.Models = v.modelLimit(dot(path, "models"), raw)
	}
	if submitting {
		retain := true
		if raw, present := obj["retainResult"]; present {
			b, ok := raw.(bool)
			if !ok {
				v.addf(dot(path, "retainResult"), "must be a boolean, got %s", kindOf(raw))
			}
			retain = b || !ok
		}
		r.RetainResult = &retain
	}
	if raw, present := obj["action"]; present {
		if s, ok := v.stringValue(dot(path, "action"), raw); ok {
			r.Action = strings.TrimSpace(s)
		}
	}
}

// modelLimit reads the models list of a route or protocol claim. An empty
// list is refused because it is ambiguous: it could mean "no model" or
// "every model"; omitting the field says the latter.
func (v *validator) modelLimit(path string, value any) []string {
	models, ok := v.stringList(path, value, dropDuplicates, func(_ string, s string) (string, bool) { return s, true })
	if ok && len(models) == 0 {
		v.addf(path, "must not be empty; omit it to allow every model")
	}
	return models
}

// profileModels reads a usage profile's models, which must be spelled as in
// meta.models (PLUGIN-CONTEXT.md).
func (v *validator) profileModels(path string, value any) []string {
	models, ok := v.stringList(path, value, dropDuplicates, func(p, s string) (string, bool) {
		if v.models != nil && !v.models[s] {
			v.addf(p, "model %q is not declared in meta.models", s)
			return "", false
		}
		return s, true
	})
	if ok && len(models) == 0 {
		v.addf(path, "must not be empty")
	}
	return models
}
