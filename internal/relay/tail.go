package relay

import (
	"io"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// streamTail is one streamed answer on its way to the client: where its
// frames come from, what is done with each, and what is left to bill.
type streamTail struct {
	body io.Reader
	// frames reads the upstream framing; nil reads server-sent events.
	frames func(io.Reader) protocol.EventReader
	sink   *sink
	step   eventStep
	tally  *streamTally
	// broken tells a client that is already being answered that the
	// stream broke off, where the dialect can say so (nil: it cannot).
	broken func()
}

// relayEvents is the one stream tail of every streamed surface (chat in the
// three formats, completions, responses, images, transcriptions, speech and
// stored-response retrieval): pump the frames, close the answer, apply the
// one usage-fallback rule and settle. It returns an error only when nothing
// reached the client yet, so the caller may try another channel; once the
// answer started, a break is logged with the request's id, told to the
// client where the dialect allows, and the answer so far is billed.
func (c *callCore) relayEvents(t streamTail, input func() int, bill func(ir.Usage) charge) error {
	defer t.tally.answer.release()
	var err error
	if t.frames == nil {
		err = pumpSSE(t.body, t.sink, t.step, t.tally.answer.freeze)
	} else {
		err = pumpFrames(t.body, t.frames, t.sink, t.step, t.tally.answer.freeze)
	}
	if err != nil && !c.wrote {
		return err
	}
	switch {
	case err != nil && c.r.Context().Err() != nil:
		// The client left, which cancelled the upstream read: not the
		// upstream's fault, and nobody is there to tell.
		c.rl.Logger.DebugContext(c.r.Context(), "client left mid-stream", "surface", c.name, "channel_id", c.channelID())
	case err != nil:
		c.rl.Logger.WarnContext(c.r.Context(), "stream ended early", "surface", c.name, "channel_id", c.channelID(), "err", err)
		if t.broken != nil {
			t.broken()
		}
	}
	t.sink.close()
	c.settle(bill(t.tally.final(c.model, input)))
	return nil
}

// final is the one usage-fallback rule, applied field by field: what the
// upstream reported (never below zero), with a missing input count taken
// from the gateway's own count of the prompt and a missing output count
// from the relayed answer's text.
func (t *streamTally) final(model string, input func() int) ir.Usage {
	u := t.usage.NonNegative()
	if u.InputTokens == 0 && input != nil {
		u.InputTokens = input()
	}
	if u.OutputTokens == 0 && t.answer.kept() {
		u.OutputTokens = tokenize.Count(model, t.answer.String())
	}
	return u
}

// channelID is the serving channel's id for logs (0 before one was chosen).
func (c *callCore) channelID() int64 {
	if c.channel == nil {
		return 0
	}
	return c.channel.ID
}

// tokensCharge is an answer's charge at its tokens plus the per-call price.
func (c *callCore) tokensCharge(u ir.Usage) charge { return tokensPlusCall(c.price, u) }
