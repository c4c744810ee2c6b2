package relay

import (
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// The chat call's side of the response cache (cache.go): its key, replay
// in the client's format, and what it keeps.

// lookupCache is the chat call's cache stage. A request a guardrail
// rewrote is neither answered from the cache nor kept.
func (c *call) lookupCache() (bool, error) {
	if c.redacted {
		return false, nil
	}
	return c.cache.lookup()
}

// cacheKey is of the bytes that would be forwarded: the client's own body,
// checked for duplicate members when it was decoded. The chat formats
// share one space: the same body means the same in each.
func (c *call) cacheKey(group string) (respcache.Key, bool) {
	key, err := respcache.KeyOf(group, c.model, c.raw)
	return key, err == nil
}

func (c *call) body() []byte { return c.raw }

func (c *call) encodeCached(res *ir.Response) ([]byte, error) { return c.sf.codec.EncodeResponse(res) }

func (c *call) streamCached(res *ir.Response) {
	s := newSink(c.w, c, c.sf.jsonArrayStream)
	enc := c.sf.codec.NewStreamEncoder(s, protocol.StreamOptions{IncludeUsage: c.req.IncludeUsage})
	_ = responseEvents(res, enc.Encode)
	s.close()
}

// relayKeeping relays an upstream answer and, when the call may fill the
// cache and the answer came whole, keeps it.
func (c *call) relayKeeping(a upstream.Adapter, t upstream.Target, ch *routing.Channel, resp *http.Response) error {
	err := c.relay(a, t, ch, resp)
	if err == nil {
		c.cache.store(c.usage)
	}
	return err
}

// keepRegular notes a non-streamed answer for the cache: res when it was
// converted, else the passed-through body decoded in the client's dialect.
func (c *call) keepRegular(res *ir.Response, body []byte) {
	if !c.cache.keep {
		return
	}
	if res == nil {
		var err error
		if res, err = c.sf.codec.DecodeResponse(body); err != nil {
			return
		}
	}
	c.cache.note(res)
}
