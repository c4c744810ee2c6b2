package admin

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestTheOpenAPIDocumentDescribesEveryRouteThisPackageRegisters(t *testing.T) {
	e := newEnv(t)
	r := e.do("", "GET", "/api/openapi.json", "")
	if r.status != 200 || r.body["openapi"] != "3.1.0" {
		t.Fatalf("GET /api/openapi.json: %d %.200s", r.status, r.raw)
	}
	paths := r.body["paths"].(map[string]any)
	documented := map[string]map[string]any{}
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			documented[strings.ToUpper(method)+" "+path] = op.(map[string]any)
		}
	}
	for route, role := range e.api.roles {
		method, pattern, _ := strings.Cut(route, " ")
		op, ok := documented[method+" "+pathParam.ReplaceAllString(pattern, "{$1}")]
		if !ok {
			t.Errorf("%s is registered but not in the document (openapi_ops.go)", route)
			continue
		}
		want := role
		if want == "" {
			want = accessPublic
		}
		if op["x-turnpike-access"] != want {
			t.Errorf("%s: document says %v, the route requires %q", route, op["x-turnpike-access"], want)
		}
	}
}

func TestEveryDocumentedOperationHasSchemasAndResolvableReferences(t *testing.T) {
	e := newEnv(t)
	r := e.do("", "GET", "/api/openapi.json", "")
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
		Paths map[string]map[string]struct {
			Access    string          `json:"x-turnpike-access"`
			Summary   string          `json:"summary"`
			Security  []any           `json:"security"`
			Responses map[string]any  `json:"responses"`
			Body      json.RawMessage `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		for method, op := range item {
			name := strings.ToUpper(method) + " " + path
			switch op.Access {
			case "public", "session", "user", "admin", "root":
			default:
				t.Errorf("%s: access %q", name, op.Access)
			}
			if (op.Access == "public") != (len(op.Security) == 0) {
				t.Errorf("%s: access %s with security %v", name, op.Access, op.Security)
			}
			if op.Summary == "" || op.Responses["200"] == nil {
				t.Errorf("%s: no summary or no 200 answer", name)
			}
			if (method == "post" || method == "put" || method == "patch") && len(op.Body) == 0 &&
				!strings.Contains(op.Summary, "session") && !noBody[name] {
				t.Errorf("%s: no request body schema", name)
			}
		}
	}
	for _, m := range regexpRefs.FindAllStringSubmatch(r.raw, -1) {
		if _, ok := doc.Components.Schemas[m[1]]; !ok {
			t.Errorf("$ref to a missing schema %s", m[1])
		}
	}
}

// noBody are the writes that take no request body.
var noBody = map[string]bool{
	"POST /api/auth/logout": true, "POST /api/auth/2fa/setup": true, "POST /api/channels/{id}/test": true,
}
var regexpRefs = regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`)
