package manifest

import (
	"slices"
	"testing"
)

// nativeFns exports the native functions the route tests name.
var nativeFns = withFunctions("native.decodeSubmit", "native.created", "native.status")

func withRoutes(routes ...any) edit { return all(nativeFns, set("routes", arr(routes...))) }

func submitRoute(path string, extra ...any) obj {
	r := obj{"method": "POST", "path": path, "type": "submit", "decode": "decodeSubmit", "render": "created"}
	for i := 0; i < len(extra); i += 2 {
		r[extra[i].(string)] = extra[i+1]
	}
	return r
}

func queryRoute(path string, extra ...any) obj {
	r := obj{"method": "GET", "path": path, "type": "query", "render": "status"}
	for i := 0; i < len(extra); i += 2 {
		r[extra[i].(string)] = extra[i+1]
	}
	return r
}

func TestRoutes(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "submit and query pair", edit: withRoutes(submitRoute("/kling/v1/videos"), queryRoute("/kling/v1/videos/:task_id")),
			check: func(t *testing.T, m *Manifest) {
				s, q := m.Routes[0], m.Routes[1]
				if s.RetainResult == nil || !*s.RetainResult || s.TaskIDParam != "" {
					t.Errorf("submit route defaults = %+v", s)
				}
				if q.RetainResult != nil || q.TaskIDParam != DefaultTaskIDParam || q.Decode != "" {
					t.Errorf("query route defaults = %+v", q)
				}
				if s.DecodeHook() != "native.decodeSubmit" || q.RenderHook() != "native.status" {
					t.Errorf("hook paths = %q %q", s.DecodeHook(), q.RenderHook())
				}
			}},
		{name: "lowercase method normalised", edit: withRoutes(submitRoute("/x", "method", "post")), check: func(t *testing.T, m *Manifest) {
			if m.Routes[0].Method != "POST" {
				t.Errorf("method = %q", m.Routes[0].Method)
			}
		}},
		{name: "dynamic with models retainResult and action",
			edit: withRoutes(submitRoute("/x/fetch", "type", "dynamic", "models", arr("m1"), "retainResult", false, "action", "FETCH")),
			check: func(t *testing.T, m *Manifest) {
				r := m.Routes[0]
				if *r.RetainResult || r.Action != "FETCH" || !slices.Equal(r.Models, []string{"m1"}) {
					t.Errorf("route = %+v", r)
				}
			}},
		{name: "custom taskIdParam", edit: withRoutes(queryRoute("/x/:id", "taskIdParam", "id"))},
		{name: "missing method path type render", edit: withRoutes(obj{}), want: []string{
			"meta.routes[0].method|required", "meta.routes[0].path|required", "meta.routes[0].type|required", "meta.routes[0].render|required"}},
		{name: "any HTTP method token", edit: withRoutes(submitRoute("/x", "method", "options")),
			check: func(t *testing.T, m *Manifest) {
				if m.Routes[0].Method != "OPTIONS" {
					t.Errorf("method = %q, want OPTIONS", m.Routes[0].Method)
				}
			}},
		{name: "method that is not a token", edit: withRoutes(submitRoute("/x", "method", "GET /")), want: []string{"meta.routes[0].method"}},
		{name: "unknown type", edit: withRoutes(submitRoute("/x", "type", "stream")), want: []string{"meta.routes[0].type"}},
		{name: "path without slash", edit: withRoutes(submitRoute("x")), want: []string{"meta.routes[0].path|start with /"}},
		{name: "path with empty segment", edit: withRoutes(submitRoute("/x//y")), want: []string{"meta.routes[0].path|empty"}},
		{name: "path with trailing slash as jimeng publishes it", edit: withRoutes(submitRoute("/jimeng/")),
			check: func(t *testing.T, m *Manifest) {
				if m.Routes[0].Path != "/jimeng/" || m.Routes[0].Shape() != "/jimeng" {
					t.Errorf("route %+v shape %q", m.Routes[0], m.Routes[0].Shape())
				}
			}},
		{name: "trailing slash is the same route", edit: withRoutes(submitRoute("/x/"), submitRoute("/x")), want: []string{"meta.routes[1]|conflicts"}},
		{name: "param named with any characters", edit: withRoutes(submitRoute("/x/:1d"))},
		{name: "param without a name", edit: withRoutes(submitRoute("/x/:")), want: []string{"meta.routes[0].path|parameter"}},
		{name: "path with a query string", edit: withRoutes(submitRoute("/x?Action=Submit")), want: []string{"meta.routes[0].path|query"}},
		{name: "root GET is the console", edit: withRoutes(queryRoute("/:task_id"), obj{"method": "GET", "path": "/", "type": "dynamic", "decode": "decodeSubmit", "render": "created"}),
			want: []string{"meta.routes[1].path|gateway"}},
		{name: "path repeating a param", edit: withRoutes(submitRoute("/x/:a/:a")), want: []string{"meta.routes[0].path|repeats"}},
		{name: "path with dot segment", edit: withRoutes(submitRoute("/x/../y")), want: []string{"meta.routes[0].path"}},
		{name: "submit without decode", edit: withRoutes(obj{"method": "POST", "path": "/x", "type": "submit", "render": "created"}),
			want: []string{"meta.routes[0].decode|required"}},
		{name: "query with decode", edit: withRoutes(queryRoute("/x/:task_id", "decode", "decodeSubmit")), want: []string{"meta.routes[0].decode|query"}},
		{name: "decode not exported", edit: withRoutes(submitRoute("/x", "decode", "missing")), want: []string{"meta.routes[0].decode|native.missing"}},
		{name: "render not exported", edit: withRoutes(submitRoute("/x", "render", "missing")), want: []string{"meta.routes[0].render|native.missing"}},
		{name: "render exported only at top level", edit: all(withRoutes(submitRoute("/x", "render", "parseTaskResult"))),
			want: []string{"meta.routes[0].render|native.parseTaskResult"}},
		{name: "draft renderer field", edit: withRoutes(submitRoute("/x", "renderer", "created")), want: []string{"meta.routes[0].renderer|draft"}},
		{name: "unknown route field", edit: withRoutes(submitRoute("/x", "timeout", float64(5))), want: []string{"meta.routes[0].timeout|unknown"}},
		{name: "taskIdParam on submit", edit: withRoutes(submitRoute("/x/:task_id", "taskIdParam", "task_id")), want: []string{"meta.routes[0].taskIdParam|query"}},
		{name: "taskIdParam read from the query string", edit: withRoutes(queryRoute("/x/query", "taskIdParam", "task")),
			check: func(t *testing.T, m *Manifest) {
				if m.Routes[0].TaskIDParam != "task" {
					t.Errorf("taskIdParam = %q", m.Routes[0].TaskIDParam)
				}
			}},
		{name: "query route without path parameter uses task_id from the query string", edit: withRoutes(queryRoute("/x/query")),
			check: func(t *testing.T, m *Manifest) {
				if m.Routes[0].TaskIDParam != DefaultTaskIDParam {
					t.Errorf("taskIdParam = %q", m.Routes[0].TaskIDParam)
				}
			}},
		{name: "empty taskIdParam", edit: withRoutes(queryRoute("/x/:id", "taskIdParam", "")), want: []string{"meta.routes[0].taskIdParam|empty"}},
		{name: "models on query", edit: withRoutes(queryRoute("/x/:task_id", "models", arr("m1"))), want: []string{"meta.routes[0].models|query"}},
		{name: "route model outside meta.models", edit: withRoutes(submitRoute("/x", "models", arr("m9"))),
			check: func(t *testing.T, m *Manifest) {
				if !slices.Equal(m.Routes[0].Models, []string{"m9"}) {
					t.Errorf("models = %v", m.Routes[0].Models)
				}
			}},
		{name: "empty models", edit: withRoutes(submitRoute("/x", "models", arr())), want: []string{"meta.routes[0].models|empty"}},
		{name: "retainResult on query", edit: withRoutes(queryRoute("/x/:task_id", "retainResult", true)), want: []string{"meta.routes[0].retainResult|query"}},
		{name: "retainResult not boolean", edit: withRoutes(submitRoute("/x", "retainResult", "no")), want: []string{"meta.routes[0].retainResult|boolean"}},
		{name: "routes not an array", edit: set("routes", obj{}), want: []string{"meta.routes|array"}},
	})
}

func TestRouteConflicts(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "same path different methods", edit: withRoutes(submitRoute("/x/:task_id"), queryRoute("/x/:task_id"))},
		{name: "param names differ, shape equal", edit: withRoutes(queryRoute("/x/:task_id"), queryRoute("/x/:id", "taskIdParam", "id")),
			want: []string{"meta.routes[1]|conflicts with meta.routes[0]"}},
		{name: "static and param segments differ", edit: withRoutes(queryRoute("/x/:task_id"), queryRoute("/x/list/:task_id"))},
		{name: "std_video create path", edit: withRoutes(submitRoute("/v1/videos")), want: []string{"meta.routes[0].path|std_video"}},
		{name: "std_video retrieve path", edit: withRoutes(queryRoute("/v1/videos/:task_id")), want: []string{"meta.routes[0].path|std_video"}},
		{name: "std_video content HEAD", edit: withRoutes(queryRoute("/v1/videos/:task_id/content", "method", "HEAD")), want: []string{"meta.routes[0].path|std_video"}},
		{name: "std_responses paths", edit: withRoutes(submitRoute("/v1/responses"), queryRoute("/v1/responses/:task_id")),
			want: []string{"meta.routes[0].path|std_responses", "meta.routes[1].path|std_responses"}},
		{name: "std_image paths", edit: withRoutes(submitRoute("/v1/images/generations"), submitRoute("/v1/images/edits")),
			want: []string{"meta.routes[0].path|std_image", "meta.routes[1].path|std_image"}},
		{name: "POST on a GET-only host path is free", edit: withRoutes(submitRoute("/v1/videos/:id"))},
		{name: "gateway endpoint", edit: withRoutes(submitRoute("/v1/chat/completions")), want: []string{"meta.routes[0].path|gateway"}},
		{name: "admin prefix", edit: withRoutes(submitRoute("/api/plugin/task")), want: []string{"meta.routes[0].path|gateway"}},
	})
}

func TestRouteShape(t *testing.T) {
	for in, want := range map[string]string{
		"/v1/x/:id":       "/v1/x/:",
		"/v1/x/:task":     "/v1/x/:",
		"/a/:b/c/:d":      "/a/:/c/:",
		"/static/path":    "/static/path",
		"/v1/x:y/:id/raw": "/v1/x:y/:/raw",
	} {
		if got := RouteShape(in); got != want {
			t.Errorf("RouteShape(%q) = %q, want %q", in, got, want)
		}
	}
}
