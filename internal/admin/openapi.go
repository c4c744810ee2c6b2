package admin

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// OpenAPIRoutes lists the "METHOD /path" of every documented route, as
// the mux patterns they are registered with; the gateway's own test checks
// it against the routes really served.
func OpenAPIRoutes() []string {
	ops := newDocSchemas().ops()
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.route
	}
	return out
}

// openAPI serves the document. It is built from the operations and from the roles
// this package registered its routes with, so who may call a route is
// what the code enforces.
func (a *API) openAPI(w http.ResponseWriter, _ *http.Request, _ *auth.Principal) error {
	a.docOnce.Do(func() { a.doc, a.docErr = json.Marshal(a.document()) })
	if a.docErr != nil {
		return a.docErr
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(a.doc)
	return err
}

// access names who may call a route: public, user, admin or root.
func (a *API) access(op apiOp) string {
	if op.route == "GET /metrics" && a.d.MetricsAdminOnly {
		return store.RoleAdmin
	}
	if role, ok := a.roles[op.route]; ok {
		if role == "" {
			return accessPublic
		}
		return role
	}
	if op.who == "" {
		return accessPublic
	}
	return op.who
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)(\.\.\.)?\}`)

func (a *API) document() schema {
	d := newDocSchemas()
	paths := map[string]schema{}
	for _, op := range d.ops() {
		method, pattern, _ := strings.Cut(op.route, " ")
		path := pathParam.ReplaceAllString(pattern, "{$1}")
		if paths[path] == nil {
			paths[path] = schema{}
		}
		paths[path][strings.ToLower(method)] = a.operation(op, method, pattern)
	}
	return schema{
		"openapi": "3.1.0",
		"info": schema{
			"title":   "Turnpike administration API",
			"version": a.d.Version,
			"description": "Every route of /api (and /healthz, /metrics). x-turnpike-access says who may call each: " +
				"public, session (anyone signed in), user, admin or root (roles rank root > admin > user; a user sees only its own records). " +
				"Authenticate with the root token as a Bearer, or with the session cookie set by POST /api/auth/login. " +
				"Errors are {\"error\":{\"code\",\"message\"}}; lists take ?page=&page_size= and answer {\"items\",\"total\"}.",
		},
		"components": schema{
			"schemas": d.components(),
			"securitySchemes": schema{
				"rootToken": schema{"type": "http", "scheme": "bearer", "description": "the root_token setting: root on every route"},
				"session":   schema{"type": "apiKey", "in": "cookie", "name": auth.SessionCookie, "description": "a console session (POST /api/auth/login)"},
			},
		},
		"paths": paths,
	}
}

func (a *API) operation(op apiOp, method, pattern string) schema {
	who := a.access(op)
	o := schema{
		"operationId":       operationID(method, pattern),
		"summary":           op.summary,
		"x-turnpike-access": who,
		"responses": schema{
			"200":     schema{"description": "success", "content": schema{"application/json": schema{"schema": op.answer}}},
			"default": schema{"description": "an error", "content": schema{"application/json": schema{"schema": ref("Error")}}},
		},
	}
	if who == accessPublic {
		o["security"] = []schema{}
	} else {
		o["security"] = []schema{{"rootToken": []string{}}, {"session": []string{}}}
		o["description"] = "Who may call it: " + who + " or a stronger role (401 without a sign-in, 403 below " + who + ")."
		if who == accessSession {
			o["description"] = "Who may call it: anyone signed in (a console session, or the root token); 401 otherwise."
		}
	}
	var params []schema
	for _, m := range pathParam.FindAllStringSubmatch(pattern, -1) {
		s := str
		if m[1] == "id" {
			s = integer
		}
		params = append(params, schema{"name": m[1], "in": "path", "required": true, "schema": s})
	}
	for _, q := range op.query {
		s := str
		if q == "page" || q == "page_size" || strings.HasSuffix(q, "_id") {
			s = integer
		}
		params = append(params, schema{"name": q, "in": "query", "required": false, "schema": s})
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.body != nil {
		o["requestBody"] = schema{"required": true, "content": schema{"application/json": schema{"schema": op.body}}}
	}
	return o
}

// operationID is the route as an identifier: "post_api_tokens_id_rotate".
func operationID(method, pattern string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.Split(pattern, "/") {
		part = strings.Trim(strings.TrimSuffix(part, "...}"), "{}")
		part = strings.NewReplacer("-", "_", ".", "_").Replace(part)
		if part != "" {
			b.WriteString("_" + part)
		}
	}
	return b.String()
}
