package mcpgw

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"
)

// initTimeout bounds opening one upstream session at initialize: a slow
// server must not hold up the client's session with the others.
const initTimeout = 10 * time.Second

// open starts a client session: one upstream session with each server the
// caller may use on this surface, opened together. A server that fails
// here is left out; its first request opens a session then.
func (g *Gateway) open(ctx context.Context, c *call) *session {
	s := &session{Key: c.principal.TokenID, Scope: scopeName(c), Issued: time.Now().Unix(), Up: map[string]upSession{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, srv := range c.servers() {
		wg.Go(func() {
			ictx, cancel := context.WithTimeout(ctx, min(srv.timeout, initTimeout))
			defer cancel()
			us, err := g.up.initialize(ictx, srv)
			if err != nil {
				g.log.WarnContext(ctx, "MCP upstream session not opened at initialize; the first request retries", "server", srv.Name, "err", err)
				return
			}
			mu.Lock()
			s.Up[upKey(srv.ID)] = us
			mu.Unlock()
		})
	}
	wg.Wait()
	return s
}

// servers are the servers the call may use on its surface.
func (c *call) servers() []*server {
	if c.scope != nil {
		return []*server{c.scope}
	}
	return c.reg.granted(c.access)
}

// exchange runs fn within the upstream session of srv that belongs to the
// call's session, opening one when it has none or when the upstream forgot
// it (a restart, an expiry); the request is then sent once more, which is
// safe because an upstream that did not know the session ran nothing.
func (g *Gateway) exchange(ctx context.Context, c *call, srv *server, fn func(upSession) (json.RawMessage, error)) (json.RawMessage, error) {
	us, ok := g.sessionWith(c, srv)
	if !ok {
		var err error
		if us, err = g.reopen(ctx, c, srv); err != nil {
			return nil, err
		}
	}
	out, err := fn(us)
	var ue *upstreamError
	if errors.As(err, &ue) && ue.gone {
		if us, err = g.reopen(ctx, c, srv); err != nil {
			return nil, err
		}
		return fn(us)
	}
	return out, err
}

func (g *Gateway) sessionWith(c *call, srv *server) (upSession, bool) {
	if us, ok := g.replaced.Get(replacedKey(c, srv)); ok {
		return us, true
	}
	if c.sess != nil {
		us, ok := c.sess.Up[upKey(srv.ID)]
		return us, ok
	}
	return upSession{}, false
}

func (g *Gateway) reopen(ctx context.Context, c *call, srv *server) (upSession, error) {
	us, err := g.up.initialize(ctx, srv)
	if err != nil {
		return upSession{}, err
	}
	g.replaced.Add(replacedKey(c, srv), us)
	return us, nil
}

// replacedKey names a client session's upstream session with srv on this
// node; a request outside a session shares one per key.
func replacedKey(c *call, srv *server) string {
	base := "key:" + strconv.FormatInt(c.principal.TokenID, 10)
	if c.sid != "" {
		sum := sha256.Sum256([]byte(c.sid))
		base = hex.EncodeToString(sum[:16])
	}
	return base + "/" + upKey(srv.ID)
}
