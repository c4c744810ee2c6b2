package admin

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// MCP servers (CONTRACT §19) are the root's: their headers are credentials
// for the tool server, handled like a channel's key and header values:
// write-only, masked in every answer, kept unless sent again, and needed
// again when url moves to another host.
func (a *API) routeMCP(mux *http.ServeMux) {
	a.route(mux, "GET /api/mcp/servers", store.RoleRoot, "mcp server", a.listMCPServers)
	a.route(mux, "POST /api/mcp/servers", store.RoleRoot, "mcp server", a.createMCPServer)
	a.route(mux, "GET /api/mcp/servers/{id}", store.RoleRoot, "mcp server", a.getMCPServer)
	a.route(mux, "PATCH /api/mcp/servers/{id}", store.RoleRoot, "mcp server", a.patchMCPServer)
	a.route(mux, "DELETE /api/mcp/servers/{id}", store.RoleRoot, "mcp server", a.deleteMCPServer)
}

type mcpServerView struct {
	ID              int64             `json:"id"`
	Name            string            `json:"name"`
	URL             string            `json:"url"`
	Headers         map[string]string `json:"headers"`
	TimeoutSeconds  int               `json:"timeout_seconds"`
	PricePerCallUSD float64           `json:"price_per_call_usd"`
	Tools           []string          `json:"tools"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

func mcpView(s *store.MCPServer) mcpServerView {
	masked := make(map[string]string, len(s.Headers))
	for k, v := range s.Headers {
		masked[k] = maskSecret(v)
	}
	return mcpServerView{ID: s.ID, Name: s.Name, URL: s.URL, Headers: masked, TimeoutSeconds: s.TimeoutSeconds,
		PricePerCallUSD: s.PricePerCallUSD, Tools: s.Tools, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

var mcpFields = []string{"name", "url", "headers", "timeout_seconds", "price_per_call_usd", "tools"}

// validMCPName says whether s is a server name: it prefixes its tools as
// <server>__<tool> on /mcp and is a path segment of /mcp/<server>, so it is
// a plain token without the separator, of at most 64 bytes.
func validMCPName(s string) bool { return len(s) <= 64 && mcpNameChars.MatchString(s) }

// The length caps of names are checked apart from their alphabets: a
// counted repetition ({0,63}, {1,128}) compiles into a program of one
// state per count, which together held about 97 KB for the life of the
// process.
var (
	mcpNameChars     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	headerTokenChars = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// readMCPServer applies the members of the request to s; old holds the
// stored header values (nil on create).
func readMCPServer(w http.ResponseWriter, r *http.Request, s *store.MCPServer) (fields, error) {
	f, err := readFields(w, r, mcpFields...)
	if err != nil {
		return nil, err
	}
	old := s.Headers
	if _, err := get(f, "name", &s.Name); err != nil {
		return nil, err
	}
	if f.has("name") && (!validMCPName(s.Name) || strings.Contains(s.Name, "__")) {
		return nil, badField("name", "must be 1 to 64 letters, digits, '-' or '_', start with a letter or digit, and not contain \"__\"")
	}
	if _, err := get(f, "url", &s.URL); err != nil {
		return nil, err
	}
	if u, err := url.Parse(s.URL); f.has("url") && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return nil, badField("url", "must be an absolute http or https address of a Streamable HTTP MCP endpoint")
	}
	if err := readMCPHeaders(f, s, old); err != nil {
		return nil, err
	}
	if _, err := get(f, "timeout_seconds", &s.TimeoutSeconds); err != nil {
		return nil, err
	}
	if s.TimeoutSeconds < 0 || s.TimeoutSeconds > 3600 {
		return nil, badField("timeout_seconds", "must be 0 (the default, 60) to 3600")
	}
	if _, err := get(f, "price_per_call_usd", &s.PricePerCallUSD); err != nil {
		return nil, err
	}
	if p := s.PricePerCallUSD; p < 0 || p > 1e6 || math.IsNaN(p) {
		return nil, badField("price_per_call_usd", "must be a number from 0 to 1000000")
	}
	return f, readMCPTools(f, s)
}

// readMCPHeaders takes the headers sent; a value sent back in its masked
// form keeps the stored one, and headers left out keep them all.
func readMCPHeaders(f fields, s *store.MCPServer, old map[string]string) error {
	if !f.has("headers") {
		return nil
	}
	var hs map[string]string
	if !f.isNull("headers") {
		if _, err := get(f, "headers", &hs); err != nil {
			return err
		}
	}
	for name, v := range hs {
		if !validHeaderName(name) || strings.ContainsAny(v, "\r\n\x00") {
			return badField("headers", "%q is not a header name with a one-line value", name)
		}
		if prev, ok := old[name]; ok && v == maskSecret(prev) {
			hs[name] = prev
		}
	}
	s.Headers = hs
	return nil
}

// validHeaderName is an HTTP header name (a token) of at most 128 bytes.
func validHeaderName(s string) bool { return len(s) <= 128 && headerTokenChars.MatchString(s) }

func readMCPTools(f fields, s *store.MCPServer) error {
	if !f.has("tools") {
		return nil
	}
	if f.isNull("tools") {
		s.Tools = nil
		return nil
	}
	if _, err := getList(f, "tools", &s.Tools); err != nil {
		return err
	}
	for _, t := range s.Tools {
		if t == "" || len(t) > 128 {
			return badField("tools", "must hold tool names of 1 to 128 bytes, or be null for every tool")
		}
	}
	return nil
}

func (a *API) listMCPServers(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	all, err := a.d.Store.MCP().ListServers(r.Context())
	if err != nil {
		return err
	}
	shown := pageOf(all, page)
	views := make([]mcpServerView, 0, len(shown))
	for i := range shown {
		views = append(views, mcpView(&shown[i]))
	}
	apijson.Write(w, http.StatusOK, newList(views, len(all)))
	return nil
}

func (a *API) getMCPServer(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	s, err := a.loadMCPServer(r)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, mcpView(s))
	return nil
}

func (a *API) loadMCPServer(r *http.Request) (*store.MCPServer, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return a.d.Store.MCP().GetServer(r.Context(), id)
}

func (a *API) createMCPServer(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	s := &store.MCPServer{}
	f, err := readMCPServer(w, r, s)
	if err != nil {
		return err
	}
	for _, req := range []string{"name", "url"} {
		if !f.has(req) {
			return badField(req, "is required")
		}
	}
	if err := a.d.Store.MCP().CreateServer(r.Context(), s); err != nil {
		return err
	}
	noteTarget(r.Context(), s.ID)
	return a.mcpChanged(w, r.Context(), s)
}

func (a *API) patchMCPServer(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	s, err := a.loadMCPServer(r)
	if err != nil {
		return err
	}
	oldURL, oldHeaders := s.URL, s.Headers
	f, err := readMCPServer(w, r, s)
	if err != nil {
		return err
	}
	if movedHost(oldURL, s.URL) && len(oldHeaders) > 0 && keptAny(s.Headers, oldHeaders, f.has("headers")) {
		// Stored credentials never follow the server to another host
		// unless whoever moves it knows them.
		return badField("headers", "must be sent again (whole) when url moves to another host")
	}
	if err := a.d.Store.MCP().UpdateServer(r.Context(), s); err != nil {
		return err
	}
	return a.mcpChanged(w, r.Context(), s)
}

func movedHost(before, after string) bool {
	b, err1 := url.Parse(before)
	n, err2 := url.Parse(after)
	return err1 != nil || err2 != nil || !strings.EqualFold(b.Host, n.Host)
}

// keptAny reports whether a stored header value is still in headers: all
// of them when headers were not sent, else each sent back masked.
func keptAny(headers, old map[string]string, sent bool) bool {
	if !sent {
		return true
	}
	for name, v := range old {
		if headers[name] == v {
			return true
		}
	}
	return false
}

func (a *API) deleteMCPServer(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := a.d.Store.MCP().DeleteServer(r.Context(), id); err != nil {
		return err
	}
	if err := a.reloadMCP(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, deleted{ID: id, Deleted: true})
	return nil
}

// mcpChanged makes the gateway see the change and answers the server.
func (a *API) mcpChanged(w http.ResponseWriter, ctx context.Context, s *store.MCPServer) error {
	if err := a.reloadMCP(ctx); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, mcpView(s))
	return nil
}

func (a *API) reloadMCP(ctx context.Context) error {
	if a.d.MCPReload == nil {
		return nil
	}
	return a.d.MCPReload(ctx)
}
