package relay

import (
	"io"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
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
	step, fo, bill := c.streamStep(up, s, tally)
	if rec := c.cache.recorder(); rec != nil {
		step = &recordStep{eventStep: step, dec: up.NewStreamDecoder(), rec: rec}
	}
	t := streamTail{body: resp.Body, frames: events, sink: s, step: step, tally: tally, broken: failEvent(s, c.sf.codec)}
	if fo != nil {
		c.resume = c.newResumer(c.req, c.promptTokens, fo, s, tally)
		t.resume, bill = c.resume.resume, c.resume.bill(bill)
	}
	return c.relayEvents(t, c.promptTokens, bill)
}

// streamStep is how a chat stream's events reach the client: passed through
// when the formats match, else decoded and encoded again (fo is the
// failover encoder when the model fails over mid-stream). It is built in a
// function of its own so that its frame is gone before the pump runs.
func (c *call) streamStep(up protocol.UpstreamCodec, s *sink, tally *streamTally) (step eventStep, fo *failoverEncoder, bill func(ir.Usage) charge) {
	// A guardrail on answers needs the text of each event, so the stream
	// is decoded and re-encoded even when the formats match.
	guarded := c.rl.guardSet().Applies(c.guardCall(), guardrail.StageResponse)
	bill = c.chatCharge
	if up.Format() == c.sf.codec.Format() && !guarded && !c.price.Raw.StreamFailover {
		ends, _ := c.sf.codec.(protocol.StreamEndSniffer)
		step = &passStep{sp: c.sf.codec, sink: s, tally: tally, dropUsageOnly: !c.req.IncludeUsage, ends: ends}
	} else {
		enc := c.sf.codec.NewStreamEncoder(s, protocol.StreamOptions{IncludeUsage: c.req.IncludeUsage})
		enc, bill = c.guardEncoding(enc, dialectFail(s, c.sf.codec), bill)
		if c.price.Raw.StreamFailover {
			// Decoded and re-encoded even when the formats match, so a
			// continuation from another wire joins the same answer.
			fo = newFailoverEncoder(enc)
			enc = fo
		}
		cs := newConvertStep(up.NewStreamDecoder(), enc, c.model, c.promptTokens(), tally)
		cs.out = s
		step = cs
	}
	return step, fo, bill
}

// failEvent ends a stream the upstream broke off with the client dialect's
// error event, so no client takes a truncated answer for a whole one
// (CONTRACT §22); nil when the format has none.
func failEvent(s *sink, codec any) func() {
	fe, ok := codec.(protocol.StreamErrorEncoder)
	if !ok {
		return nil
	}
	return func() {
		name, data := fe.EncodeStreamError(&ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken",
			Message: "the upstream stream broke off before the answer was complete"})
		_ = s.Event(name, data)
	}
}

// chatCharge is a chat answer's charge: its tokens plus the per-call price.
func (c *call) chatCharge(u ir.Usage) charge {
	c.usage = u
	return charge{usage: u, usd: c.price.OneCallCost()}
}
