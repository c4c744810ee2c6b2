package mcpgw

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/obs"
)

// call is one HTTP request to /mcp or /mcp/<server> as the method handlers
// see it: who asks, what it may use, the surface and the session.
type call struct {
	principal *auth.Principal
	access    access
	reg       *registry
	// scope is the one server of /mcp/<server>; nil on /mcp.
	scope *server
	// sess is the client's session (nil for a request outside one) and
	// sid its sealed id.
	sess      *session
	sid       string
	requestID string
}

type callKey struct{}

// maxBody bounds a client's message, as the SDK's default does.
const maxBody = 4 << 20

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) {
	p, err := g.d.Keys.Authenticate(r.Context(), auth.BearerToken(r))
	if err != nil {
		e := ir.As(err)
		if e.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", "Bearer")
		}
		httpError(w, e.Status, e.Message)
		return
	}
	reg := g.reg.Load()
	c := &call{principal: p, reg: reg, requestID: obs.RequestID(r.Context())}
	c.access = reg.accessFor(levelsOf(p))
	if name := r.PathValue("server"); name != "" {
		if c.scope = reg.byName[name]; c.scope == nil {
			httpError(w, http.StatusNotFound, "no MCP server is named "+name)
			return
		}
		if !c.access.server(name) {
			httpError(w, http.StatusForbidden, "this API key may not use MCP server "+name)
			return
		}
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(supportedVersions, v) {
		unsupportedVersion(w, v)
		return
	}
	switch r.Method {
	case http.MethodPost:
		g.post(w, r, c)
	case http.MethodDelete:
		g.delete(w, r, c)
	default:
		// The standalone event stream is optional (the spec allows 405):
		// the gateway sends nothing unasked, so there is nothing to stream.
		w.Header().Set("Allow", "POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "this MCP endpoint takes POST and DELETE")
	}
}

func (g *Gateway) post(w http.ResponseWriter, r *http.Request, c *call) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, "the message is larger than the gateway accepts")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	switch sid := r.Header.Get("Mcp-Session-Id"); {
	case initializes(body):
		c.sess = g.open(r.Context(), c)
		if c.sid, err = g.sessions.issue(c.sess); err != nil {
			httpError(w, http.StatusInternalServerError, "the session could not be sealed")
			return
		}
		w.Header().Set("Mcp-Session-Id", c.sid)
	case sid != "":
		s := g.sessions.open(sid)
		if s == nil || s.Key != c.principal.TokenID || s.Scope != scopeName(c) {
			// Another key's session is as unknown as a made-up one.
			httpError(w, http.StatusNotFound, "no such MCP session; initialize a new one")
			return
		}
		c.sess, c.sid = s, sid
	}
	h := g.sse
	if !acceptsStream(r.Header.Values("Accept")) {
		// A client that takes only JSON gets JSON answers; the SDK asks for
		// both media types, so it is told the client's wish this way.
		h = g.json
		r.Header.Add("Accept", "text/event-stream")
	}
	h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
}

// delete ends a session: its upstream sessions are closed. The sealed id
// itself is not recorded anywhere, so there is nothing else to end.
func (g *Gateway) delete(w http.ResponseWriter, r *http.Request, c *call) {
	s := g.sessions.open(r.Header.Get("Mcp-Session-Id"))
	if s == nil || s.Key != c.principal.TokenID || s.Scope != scopeName(c) {
		httpError(w, http.StatusNotFound, "no such MCP session")
		return
	}
	for _, srv := range c.reg.order {
		if us, ok := s.Up[upKey(srv.ID)]; ok {
			ctx, cancel := context.WithTimeout(r.Context(), min(srv.timeout, 5*time.Second))
			g.up.end(ctx, srv, us)
			cancel()
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func scopeName(c *call) string {
	if c.scope == nil {
		return ""
	}
	return c.scope.Name
}

// initializes reports whether body holds an initialize request (alone or in
// a batch, which 2025-03-26 allows).
func initializes(body []byte) bool {
	body = bytes.TrimSpace(body)
	var msgs []struct {
		Method string `json:"method"`
	}
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return false
		}
	} else {
		msgs = msgs[:0:0]
		var one struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &one) != nil {
			return false
		}
		msgs = append(msgs, one)
	}
	for _, m := range msgs {
		if m.Method == "initialize" {
			return true
		}
	}
	return false
}

func acceptsStream(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "text/event-stream", "text/*", "*/*":
				return true
			}
		}
	}
	return len(values) == 0
}

// withCall hands the request's call to the SDK's handlers: the SDK passes
// a request's bearer token information to method handlers, so the call
// travels as that.
func withCall(h http.Handler) http.Handler {
	verify := func(ctx context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		c, ok := ctx.Value(callKey{}).(*call)
		if !ok {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{UserID: strconv.FormatInt(c.principal.TokenID, 10), Expiration: time.Now().Add(24 * time.Hour),
			Extra: map[string]any{"turnpike.call": c}}, nil
	}
	return sdkauth.RequireBearerToken(verify, nil)(h)
}

// httpError answers a refusal before any JSON-RPC exchange as a JSON-RPC
// error without an id, the shape the SDKs read from a failed HTTP answer.
func httpError(w http.ResponseWriter, status int, msg string) {
	writeRPCError(w, status, &jsonrpc.Error{Code: -32000 - int64(status%100), Message: msg})
}

func writeRPCError(w http.ResponseWriter, status int, e *jsonrpc.Error) {
	b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: e})
	if err != nil {
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// unsupportedVersion refuses a request in a protocol version the gateway
// does not speak with 400 and the versions it does, so a client probing a
// newer version falls back to one of them.
func unsupportedVersion(w http.ResponseWriter, v string) {
	data, _ := json.Marshal(map[string]any{"supported": supportedVersions, "requested": v})
	writeRPCError(w, http.StatusBadRequest, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "unsupported MCP protocol version " + v + "; supported: " + strings.Join(supportedVersions, ", "), Data: data})
}
