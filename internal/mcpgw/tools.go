package mcpgw

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsTTL is how long a server's tool list is trusted without a
// notifications/tools/list_changed from it.
const toolsTTL = 5 * time.Minute

// toolCache keeps each server's tool list on this node. The list is read
// through a session of the node's own (the SDK's client), which also keeps
// the standalone event stream open, so a list_changed the server sends is
// heard at once; one seen in a client's exchange counts too.
type toolCache struct {
	client  *http.Client
	version string
	log     *slog.Logger
	mu      sync.Mutex
	entries map[int64]*toolEntry
}

type toolEntry struct {
	// mu is held while the list is fetched, so one fetch serves everyone
	// who asked meanwhile.
	mu      sync.Mutex
	at      time.Time // the server's UpdatedAt the entry was made for
	tools   []*mcp.Tool
	fetched time.Time
	stale   atomic.Bool
	watch   *mcp.ClientSession
}

func newToolCache(client *http.Client, version string, log *slog.Logger) *toolCache {
	return &toolCache{client: client, version: version, log: log, entries: map[int64]*toolEntry{}}
}

func (c *toolCache) entry(s *server) *toolEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[s.ID]
	if e == nil || !e.at.Equal(s.UpdatedAt) {
		if e != nil {
			go e.closeWatch()
		}
		e = &toolEntry{at: s.UpdatedAt}
		c.entries[s.ID] = e
	}
	return e
}

// get returns the server's tools, fetching them when the list is older
// than toolsTTL or was announced changed.
func (c *toolCache) get(ctx context.Context, s *server) ([]*mcp.Tool, error) {
	e := c.entry(s)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tools != nil && !e.stale.Load() && time.Since(e.fetched) < toolsTTL {
		return e.tools, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tools, err := c.fetch(ctx, s, e)
	if err != nil {
		return nil, &upstreamError{server: s.Name, msg: "did not list its tools: " + err.Error()}
	}
	e.tools, e.fetched = tools, time.Now()
	return tools, nil
}

func (c *toolCache) fetch(ctx context.Context, s *server, e *toolEntry) ([]*mcp.Tool, error) {
	if e.watch == nil {
		cs, err := c.connect(ctx, s, e)
		if err != nil {
			return nil, err
		}
		e.watch = cs
	}
	// Cleared before the read: a change announced while it runs marks the
	// list stale again.
	e.stale.Store(false)
	tools := []*mcp.Tool{}
	for t, err := range e.watch.Tools(ctx, nil) {
		if err != nil {
			e.closeWatchLocked()
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// connect opens the node's watching session with s; when it ends (the
// server went away), the list is fetched afresh at the next request.
func (c *toolCache) connect(ctx context.Context, s *server, e *toolEntry) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "turnpike", Version: c.version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { e.stale.Store(true) },
	})
	hc := &http.Client{Transport: headerTransport{base: c.client.Transport, headers: s.Headers}, Timeout: 0}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: 2},
		&mcp.ClientSessionOptions{ProtocolVersion: upstreamVersion})
	if err != nil {
		return nil, err
	}
	go func() {
		_ = cs.Wait()
		e.stale.Store(true)
	}()
	return cs, nil
}

// changed marks a server's list stale (a list_changed seen in an exchange).
func (c *toolCache) changed(s *server) { c.entry(s).stale.Store(true) }

// forgetExcept drops the entries of servers no longer registered.
func (c *toolCache) forgetExcept(reg *registry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.entries {
		if s, ok := reg.byID(id); !ok || !e.at.Equal(s.UpdatedAt) {
			go e.closeWatch()
			delete(c.entries, id)
		}
	}
}

func (c *toolCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.entries {
		go e.closeWatch()
		delete(c.entries, id)
	}
}

func (e *toolEntry) closeWatch() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closeWatchLocked()
}

func (e *toolEntry) closeWatchLocked() {
	if e.watch != nil {
		_ = e.watch.Close()
		e.watch = nil
	}
}

// headerTransport sends a server's configured headers with every request
// of the watching session.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
