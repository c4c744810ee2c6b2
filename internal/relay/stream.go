package relay

import (
	"io"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// relayStream pumps the upstream stream to the client event by event:
// untouched when the channel speaks the client's format, converted
// otherwise.
func (c *call) relayStream(up protocol.UpstreamCodec, events func(io.Reader) protocol.EventReader, resp *http.Response) error {
	s := newSink(c.w, c, c.sf.jsonArrayStream)
	tally := &streamTally{answer: keptAnswer{sp: c.sf.codec}}
	// A guardrail on answers needs the text of each event, so the stream
	// is decoded and re-encoded even when the formats match.
	win := c.rl.guardSet().NewWindow(c.guardCall())
	bill := c.chatCharge
	var step eventStep
	if up.Format() == c.sf.codec.Format() && win == nil {
		step = &passStep{sp: c.sf.codec, sink: s, tally: tally, dropUsageOnly: !c.req.IncludeUsage}
	} else {
		enc := c.sf.codec.NewStreamEncoder(s, protocol.StreamOptions{IncludeUsage: c.req.IncludeUsage})
		if win != nil {
			enc = &guardEncoder{ctx: c.r.Context(), enc: enc, win: win, sink: s, dialect: c.sf.codec}
			bill = func(u ir.Usage) charge {
				c.guards = append(c.guards, win.Records()...)
				return c.chatCharge(u)
			}
		}
		step = newConvertStep(up.NewStreamDecoder(), enc, c.model, c.promptTokens(), tally)
	}
	return c.relayEvents(streamTail{body: resp.Body, frames: events, sink: s, step: step, tally: tally}, c.promptTokens, bill)
}

// chatCharge is a chat answer's charge: its tokens plus the per-call price.
func (c *call) chatCharge(u ir.Usage) charge {
	c.usage = u
	return charge{usage: u, usd: c.price.CallCost(1)}
}
