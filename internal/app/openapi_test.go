package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/admin"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

var apiPattern = regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE) (/api/\S*|/healthz|/metrics)$`)

// registeredAPIRoutes finds every route pattern under /api that the
// gateway's mux really serves: each "METHOD /api/…" string in the
// production sources that the running gateway routes to that very pattern.
func registeredAPIRoutes(t *testing.T, g *testkit.Gateway) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && apiPattern.MatchString(s) && servedAs(g, s) == s {
				found = append(found, s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// servedAs is the pattern the gateway routes a request for pattern to.
func servedAs(g *testkit.Gateway, pattern string) string {
	method, path, _ := strings.Cut(pattern, " ")
	path = regexp.MustCompile(`\{[a-z_]+(\.\.\.)?\}`).ReplaceAllString(path, "7")
	return g.App.RoutePattern(httptest.NewRequest(method, path, nil))
}

func TestEveryServedAPIRouteIsInTheOpenAPIDocument(t *testing.T) {
	g := testkit.Start(t)
	code, doc := g.Do(t, "GET", "/api/openapi.json", "", nil)
	if code != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("GET /api/openapi.json: %d", code)
	}
	inDoc := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			inDoc[strings.ToUpper(method)+" "+path] = true
		}
	}
	routes := registeredAPIRoutes(t, g)
	if len(routes) < 60 {
		t.Fatalf("found only %d served /api routes; the walk is broken: %v", len(routes), routes)
	}
	for _, r := range routes {
		if !inDoc[strings.ReplaceAll(r, "...}", "}")] {
			t.Errorf("%s is served but missing from /api/openapi.json (internal/admin/openapi_ops.go)", r)
		}
	}
	// And the document names no route that is not served.
	for _, r := range admin.OpenAPIRoutes() {
		if got := servedAs(g, r); got != r {
			t.Errorf("%s is documented but the gateway serves it as %q", r, got)
		}
	}
}

// A route documented as needing a role refuses a caller without one.
func TestDocumentedAccessMatchesWhatTheGatewayEnforces(t *testing.T) {
	g := testkit.Start(t)
	_, doc := g.Do(t, "GET", "/api/openapi.json", "", nil)
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			who := op.(map[string]any)["x-turnpike-access"]
			if who == "public" {
				continue
			}
			req, _ := http.NewRequest(strings.ToUpper(method), g.URL+strings.ReplaceAll(strings.ReplaceAll(path, "{id}", "1"), "{", "x"), strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 {
				t.Errorf("%s %s (documented for %v) answered %d to an anonymous caller, want 401", method, path, who, resp.StatusCode)
			}
		}
	}
}
