package manifest

import "slices"

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
	if !functionName.MatchString(s) {
		v.addf(path, "must be a function name of the native export")
		return ""
	}
	if !v.functions.Has("native." + s) {
		v.addf(path, "names native.%s, which the plugin does not export as a function", s)
		return ""
	}
	return s
}

// routeQueryFields handles taskIdParam, which only query routes have.
func (v *validator) routeQueryFields(path string, obj map[string]any, r *Route, params []string, pathOK bool) {
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
		name = s
	}
	if pathOK && !slices.Contains(params, name) {
		if present {
			v.addf(fieldPath, "names :%s, which is not a parameter of the path", name)
		} else {
			v.addf(dot(path, "path"), "query routes need a :%s parameter or a taskIdParam naming one", DefaultTaskIDParam)
		}
		return
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
		r.Models = v.modelSubset(dot(path, "models"), raw)
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
			if text, ok := v.textValue(dot(path, "action"), s, maxActionLength); ok {
				r.Action = text
			}
		}
	}
}

// modelSubset reads a non-empty list of models that must all be declared in
// meta.models, spelled exactly as there.
func (v *validator) modelSubset(path string, value any) []string {
	models, ok := v.stringList(path, value, func(p, s string) (string, bool) {
		if v.models != nil && !v.models[s] {
			v.addf(p, "model %q is not declared in meta.models", s)
			return "", false
		}
		return s, true
	})
	if ok && len(models) == 0 {
		v.addf(path, "must not be empty; omit it to allow every model")
	}
	return models
}
