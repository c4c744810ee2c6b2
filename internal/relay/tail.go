package relay

import (
	"context"
	"io"
	"maps"

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
	// uncounted: the output cannot be counted (images, audio), so a
	// client that leaves is billed the reservation.
	uncounted bool
	// resume, when set, may continue a stream the upstream broke after the
	// first byte elsewhere (stream failover); nil when it ended whole.
	resume func() error
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
	if c.cancelUpstream != nil {
		// A client that leaves ends the upstream request at once: the
		// provider stops generating what nobody reads (CONTRACT §13).
		defer context.AfterFunc(c.r.Context(), c.cancelUpstream)()
	}
	var err error
	if t.frames == nil {
		err = pumpSSE(t.body, t.sink, t.step)
	} else {
		err = pumpFrames(t.body, t.frames, t.sink, t.step)
	}
	// Settlement (billing, the usage row) and counting an answer the
	// upstream reported no usage for reach 7.7 KB below the handler:
	// aside, they leave the handler's stack at the pump's size.
	aside(func() { err = c.streamEnded(&t, err, input, bill) })
	return err
}

// streamEnded closes a stream whose pump returned and settles it. It is a
// function of its own, called once the pump is done, so that its frame (log
// arguments, charges) is not under the pump for as long as the stream is
// open.
func (c *callCore) streamEnded(tp *streamTail, err error, input func() int, bill func(ir.Usage) charge) error {
	t := *tp
	if c.content != nil {
		c.contentStream(t.tally)
	}
	if t.sink.err != nil || (err != nil && c.r.Context().Err() != nil) {
		// The client left (a write failed, or its going cancelled the
		// upstream read): not the upstream's fault, nobody is there to
		// tell, and the upstream answered, so it is billed.
		c.rl.Logger.DebugContext(c.r.Context(), "client left mid-stream", "surface", c.name, "channel_id", c.channelID())
		c.settleDelivered(t, input, bill, "client_left")
		return nil
	}
	if guardStopped(err) {
		// A guardrail ended the stream on purpose, after its error event:
		// the upstream answered, so what it produced is billed.
		t.sink.close()
		c.settleDelivered(t, input, bill, "guardrail_blocked")
		return nil
	}
	if err != nil && !c.wrote {
		return err
	}
	if err != nil && t.resume != nil && t.resume() == nil {
		err = nil
	}
	if t.sink.err != nil {
		c.settleDelivered(t, input, bill, "client_left")
		return nil
	}
	if err != nil {
		// A truncated stream never looks whole (CONTRACT §22): the client
		// gets its dialect's error event and pays what it was delivered.
		c.rl.Logger.WarnContext(c.r.Context(), "stream ended early", "surface", c.name, "channel_id", c.channelID(), "err", err)
		if t.broken != nil {
			t.broken()
		}
		t.sink.close()
		c.settleDelivered(t, input, bill, "incomplete")
		return nil
	}
	t.sink.end()
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

// settleDelivered bills a stream that did not end whole — its client left
// (CONTRACT §13) or the upstream broke it off (§22): the prompt and the
// output delivered, counted with the model's tokenizer, or what the
// upstream reported when that is larger, field by field. Output the gateway
// cannot count bills the reservation when the client left. The row says
// which (mark: "client_left" or "incomplete").
func (c *callCore) settleDelivered(t streamTail, input func() int, bill func(ir.Usage) charge, mark string) {
	u := t.tally.usage.NonNegative()
	if input != nil {
		u.InputTokens = max(u.InputTokens, input())
	}
	if t.tally.answer.kept() {
		u.OutputTokens = max(u.OutputTokens, tokenize.Count(c.model, t.tally.answer.String()))
	}
	ch := bill(u)
	ch.detail = maps.Clone(ch.detail)
	if ch.detail == nil {
		ch.detail = map[string]any{}
	}
	ch.detail[mark] = true
	if t.uncounted && mark == "client_left" && c.hold != nil {
		c.settleAt(ch, c.hold.Reserved)
		return
	}
	c.settle(ch)
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
