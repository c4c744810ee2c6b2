package manifest

import (
	"regexp"
	"slices"
	"strings"
)

const shapeParam = ":"

var (
	// methodToken is an HTTP method as RFC 9110 spells one: SPEC.md only
	// says "HTTP method", so any token is accepted, upper-cased.
	methodToken    = regexp.MustCompile("^[A-Za-z!#$%&'*+.^_`|~0-9-]+$")
	routeTypes     = []string{RouteSubmit, RouteQuery, RouteDynamic}
	routeFields    = []string{"method", "path", "type", "decode", "render", "taskIdParam", "models", "retainResult", "action"}
	reservedPrefix = []string{"/api/", "/pg/"}
)

// hostRoute is a method and path shape the host serves itself.
type hostRoute struct{ method, shape, owner string }

// hostRoutes are never available to plugin routes: the host protocols' paths
// (plugins claim those through meta.protocols) and the gateway's own API.
var hostRoutes = func() []hostRoute {
	var out []hostRoute
	add := func(owner, method string, paths ...string) {
		for _, p := range paths {
			out = append(out, hostRoute{method, RouteShape(p), owner})
		}
	}
	add(ProtocolVideo, "POST", "/v1/videos")
	add(ProtocolVideo, "GET", "/v1/videos/:id", "/v1/videos/:id/content")
	add(ProtocolVideo, "HEAD", "/v1/videos/:id/content")
	add(ProtocolResponses, "POST", "/v1/responses")
	add(ProtocolResponses, "GET", "/v1/responses/:id")
	add(ProtocolImage, "POST", "/v1/images/generations", "/v1/images/edits")
	add("gateway", "POST", "/v1/chat/completions", "/v1/completions", "/v1/embeddings",
		"/v1/engines/:model/embeddings", "/v1/edits", "/v1/audio/transcriptions",
		"/v1/audio/translations", "/v1/audio/speech", "/v1/rerank", "/v1/moderations",
		"/v1/responses/compact", "/v1/alpha/search", "/v1/messages")
	add("gateway", "GET", "/", "/v1/realtime", "/v1/models", "/v1/models/:model", "/v1beta/models",
		"/v1beta/openai/models", "/v1/tasks", "/v1/tasks/:id")
	return out
}()

// RouteShape is a route path with every `:param` segment replaced by a
// placeholder, so `/v1/x/:id` and `/v1/x/:task` share the shape `/v1/x/:`.
// A trailing slash is dropped: the host matches `/x/` and `/x` alike (the
// published jimeng route is `POST /jimeng/`). Two routes with the same
// method and shape cannot both be served.
func RouteShape(path string) string {
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	segments := strings.Split(path, "/")
	for i, s := range segments {
		if strings.HasPrefix(s, ":") {
			segments[i] = shapeParam
		}
	}
	return strings.Join(segments, "/")
}

// hostRouteOwner names who serves method+shape on the host, or "".
func hostRouteOwner(method, shape string) string {
	for _, prefix := range reservedPrefix {
		if strings.HasPrefix(shape, prefix) {
			return "gateway"
		}
	}
	for _, h := range hostRoutes {
		// A GET route also answers HEAD, so HEAD cannot be taken either.
		if h.shape == shape && (h.method == method || h.method == "GET" && method == "HEAD") {
			return h.owner
		}
	}
	return ""
}

func (v *validator) routes(m *Manifest, path string, value any) {
	items, ok := arrayOf(value)
	if !ok {
		v.addf(path, "must be an array of routes, got %s", kindOf(value))
		return
	}
	seen := map[string]int{}
	for i, item := range items {
		itemPath := at(path, i)
		r, ok := v.route(itemPath, item)
		// Placement is checked whenever method and path are readable, so a
		// route with other problems still reports its conflicts.
		if r.Method == "" || r.Path == "" {
			continue
		}
		if v.routePlacement(itemPath, i, r, seen) && ok {
			m.Routes = append(m.Routes, r)
		}
	}
}

// routePlacement reports a route that repeats an earlier one's method and
// shape or takes a host path; seen maps method+shape to route index.
func (v *validator) routePlacement(path string, index int, r Route, seen map[string]int) bool {
	key := r.Method + " " + r.Shape()
	if j, dup := seen[key]; dup {
		v.addf(path, "conflicts with meta.routes[%d]: both serve %s %s", j, r.Method, r.Shape())
		return false
	}
	seen[key] = index
	switch owner := hostRouteOwner(r.Method, r.Shape()); owner {
	case "":
		return true
	case "gateway":
		v.addf(dot(path, "path"), "%s %s is served by the gateway itself", r.Method, r.Path)
	default:
		v.addf(dot(path, "path"), "%s %s is a %s host path; claim it in meta.protocols instead", r.Method, r.Path, owner)
	}
	return false
}

// route validates one native route; ok is false when it had any problem.
func (v *validator) route(path string, item any) (Route, bool) {
	obj, ok := objectOf(item)
	if !ok {
		v.addf(path, "must be an object, got %s", kindOf(item))
		return Route{}, false
	}
	start := v.count()
	for _, k := range sortedKeys(obj) {
		if k == "renderer" {
			v.addf(dot(path, k), "draft field renderer is not part of API v1; use render")
		} else if !slices.Contains(routeFields, k) {
			v.addf(dot(path, k), "unknown field")
		}
	}
	var r Route
	r.Method = v.routeMethod(path, obj)
	v.routePath(path, obj, &r)
	r.Type = v.routeEnum(path, obj, "type", routeTypes)
	v.routeHooks(path, obj, &r)
	v.routeQueryFields(path, obj, &r)
	v.routeSubmitFields(path, obj, &r)
	return r, v.count() == start
}

func (v *validator) routeMethod(path string, obj map[string]any) string {
	raw, present := obj["method"]
	if !present {
		v.addf(dot(path, "method"), "is required")
		return ""
	}
	s, ok := v.stringValue(dot(path, "method"), raw)
	if !ok {
		return ""
	}
	if !methodToken.MatchString(s) {
		v.addf(dot(path, "method"), "must be an HTTP method such as GET or POST")
		return ""
	}
	return strings.ToUpper(s)
}

func (v *validator) routeEnum(path string, obj map[string]any, name string, allowed []string) string {
	raw, present := obj[name]
	if !present {
		v.addf(dot(path, name), "is required")
		return ""
	}
	s, ok := v.stringValue(dot(path, name), raw)
	if ok && !slices.Contains(allowed, s) {
		v.addf(dot(path, name), "must be one of %s", strings.Join(allowed, ", "))
		return ""
	}
	return s
}

// routePath validates the path.
func (v *validator) routePath(path string, obj map[string]any, r *Route) {
	fieldPath := dot(path, "path")
	raw, present := obj["path"]
	if !present {
		v.addf(fieldPath, "is required")
		return
	}
	s, ok := v.stringValue(fieldPath, raw)
	if !ok {
		return
	}
	if msg := checkRoutePath(s); msg != "" {
		v.addf(fieldPath, "%s", msg)
		return
	}
	r.Path = s
}

// checkRoutePath checks a route path of static and `:param` segments. Each
// refusal names a path the host could not serve as written: it must be a
// path (leading /, no query, fragment, spaces or control characters); an
// empty segment (//) or a . or .. segment is cleaned away by HTTP routers
// before matching, so such a route would never be reached; and a parameter
// needs a name, given once, or the decoder could not tell values apart.
// A trailing slash is allowed (SPEC.md §2.8 sets no rule against it).
func checkRoutePath(s string) string {
	switch {
	case !strings.HasPrefix(s, "/"):
		return "must start with /"
	case strings.ContainsAny(s, "?#"):
		return "must be a path without a query string or fragment"
	case hasControl(s) || strings.ContainsAny(s, " \t"):
		return "must not contain spaces or control characters"
	}
	var params []string
	segments := strings.Split(strings.TrimSuffix(s[1:], "/"), "/")
	for _, seg := range segments {
		switch {
		case seg == "" && s != "/":
			return "must not contain empty segments (//)"
		case seg == "." || seg == "..":
			return "must not contain . or .. segments"
		case strings.HasPrefix(seg, ":"):
			name := seg[1:]
			if name == "" {
				return "has a parameter without a name; use :name"
			}
			if slices.Contains(params, name) {
				return "repeats the parameter :" + name
			}
			params = append(params, name)
		}
	}
	return ""
}
