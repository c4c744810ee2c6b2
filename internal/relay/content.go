package relay

import (
	"net/http"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"

	"github.com/turnpike-gw/turnpike/internal/routing"
)

// Content logging (CONTRACT §20) is a capability of the one driver, not a
// second path: the driver begins a capture once the caller is known, each
// attempt hands it the body it sent, the stream tail the answer's joined
// text, the tee on the call's writer a regular answer, the usage row names
// it, and finish hands it to the writer. A call whose key and group leave
// it off has no capture, and each of these steps is one nil check.

// beginContent starts the call's capture when its key or group asks for
// one. Realtime sessions (a WebSocket, not one request and one answer) and
// batch lines (no row of their own) keep none.
func (c *callCore) beginContent(h hooks) {
	if c.rl.Content == nil || c.line != nil || h.connector() != nil {
		return
	}
	p := c.principal
	if c.content = c.rl.Content.Begin(p.LogContent, p.Group, p.UserID); c.content != nil {
		c.w = c.content.Wrap(c.w)
	}
}

// contentSent keeps the body of the attempt's upstream request and the
// serving channel's keys (redacted wherever they show).
func (c *callCore) contentSent(req *http.Request, ch *routing.Channel) {
	c.content.Request(req)
	c.content.Keys(ch.Keys())
}

// contentStream keeps a stream's answer as its text, joined from the
// deltas the client was sent.
func (c *callCore) contentStream(t *streamTally) {
	if t.answer.kept() {
		c.content.StreamText(t.answer.String())
	}
}

// contentHit keeps a response-cache hit's request (no upstream was sent
// one) and, for a streamed replay, the answer's text; a JSON replay is
// teed like any regular answer.
func (c *callCore) contentHit(body []byte, res *ir.Response) {
	if c.content == nil {
		return
	}
	c.content.Body(body)
	// The answer came from one of the channels that serve the model to
	// the group; which one is not kept, so every one's keys are redacted.
	var keys []string
	for _, ch := range c.table.Serving(c.principal.Group, c.model) {
		keys = append(keys, ch.Keys()...)
	}
	c.content.Keys(keys)
	if c.stream {
		var text strings.Builder
		for _, p := range res.Content {
			if p.Kind == ir.PartText {
				text.WriteString(p.Text)
			}
		}
		c.content.StreamText(text.String())
	}
}

// endContent hands the capture to the writer once the call is over.
func (c *callCore) endContent() {
	if c.content != nil {
		c.rl.Content.End(c.content)
	}
}
