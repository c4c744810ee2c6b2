package relay

import (
	"context"
	"io"
	"math/big"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// continueInstruction asks an upstream that takes no assistant prefix to
// go on with the text exactly (CONTRACT §22).
const continueInstruction = "Your previous answer above was cut off. Continue it exactly where it stops: " +
	"do not repeat any of it, add no preamble, and keep its language and format."

// failover is a stream continued on a second channel: where and after how
// much, and what the second upstream cost the operator.
type failover struct {
	from, to *routing.Channel
	atChars  int
	// firstOut is the output the first upstream produced; second its
	// usage (counted where it reported none).
	firstOut int
	second   ir.Usage
}

// resumer is stream failover, a capability of every call whose answer
// reaches the client as IR events (the chat call in every format, a
// Responses call converted for a chat channel) or can be continued in IR
// events (a native Responses stream, see ep_responses_failover.go): when the upstream broke
// after the first byte and the failover encoder says the answer may be
// continued, the next channel of the call's plan that speaks a chat wire is
// asked for the rest, which is relayed on the same client stream. The
// surface gives the request in IR and its prompt's count.
type resumer struct {
	c      *callCore
	req    *ir.Request
	prompt func() int
	fo     *failoverEncoder
	s      *sink
	tally  *streamTally
	// served is the failover once a continuation ended the answer.
	served *failover
	// prime makes fo at the break, for an answer relayed untouched until
	// then (a native Responses stream); nil when fo encodes from the start.
	prime func() *failoverEncoder
}

func (c *callCore) newResumer(req *ir.Request, prompt func() int, fo *failoverEncoder, s *sink, tally *streamTally) *resumer {
	return &resumer{c: c, req: req, prompt: prompt, fo: fo, s: s, tally: tally}
}

// resume is the stream tail's resume step; it returns nil when the answer
// ended whole on another channel.
func (r *resumer) resume() error {
	c := r.c
	if r.fo == nil && r.prime != nil {
		r.fo = r.prime()
	}
	if r.fo == nil || !r.fo.resumable() || c.r.Context().Err() != nil {
		return errNoFailover
	}
	delivered := r.fo.text.String()
	for _, ch := range c.planFor(c.model, c.price) {
		if ch.ID == c.channel.ID || !c.rl.hasChatWire(ch) {
			continue
		}
		one, ok := c.rl.pickKey(ch)
		if !ok {
			continue
		}
		if err := r.continueOn(one, delivered); err == nil {
			return nil
		} else if r.s.err != nil || !errorBeforeContinuation(err) {
			return err
		}
	}
	return errNoFailover
}

var errNoFailover = &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "stream_broken", Message: "no channel could continue the stream"}

// errBeforeContinuation marks a continuation that failed before it relayed
// anything: the next channel may still be tried.
type errBeforeContinuation struct{ error }

func errorBeforeContinuation(err error) bool {
	_, ok := err.(errBeforeContinuation)
	return ok
}

// continueOn asks ch for the rest of the answer and relays it.
func (r *resumer) continueOn(ch *routing.Channel, delivered string) error {
	c := r.c
	a, t, err := c.rl.target(ch, c.model)
	if err != nil {
		return errBeforeContinuation{err}
	}
	codec := a.Codec(t)
	body, err := codec.EncodeRequest(continuation(r.req, t.Model, delivered, codec.Format()))
	if err != nil {
		return errBeforeContinuation{err}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.Context()), c.rl.Options.UpstreamTimeout)
	defer cancel()
	defer context.AfterFunc(c.r.Context(), cancel)()
	req, err := a.Chat(ctx, t, body, true, c.r.Header)
	if err != nil {
		return errBeforeContinuation{err}
	}
	resp, err := c.rl.exchange(c.r.Context(), req, ch, cancel)
	if err != nil {
		c.rl.Router.Health.Report(ch, ch.KeyIndex, ir.As(err))
		return errBeforeContinuation{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		err := adapterError(a, codec, resp)
		c.rl.Router.Health.Report(ch, ch.KeyIndex, ir.As(err))
		return errBeforeContinuation{err}
	}
	return r.relayContinuation(ch, a, codec, resp, delivered)
}

// relayContinuation relays the second upstream's answer as the rest of the
// first's and notes what each upstream produced.
func (r *resumer) relayContinuation(ch *routing.Channel, a upstream.Adapter, codec protocol.UpstreamCodec, resp *http.Response, delivered string) error {
	c, tally := r.c, r.tally
	first := tally.usage
	firstOut := max(first.OutputTokens, tokenize.Count(c.model, delivered))
	second := &streamTally{}
	r.fo.beginContinuation(func() ir.Usage {
		u := first
		u.OutputTokens = tokenize.Count(c.model, delivered+second.answer.String())
		if u.InputTokens == 0 {
			u.InputTokens = r.prompt()
		}
		return u
	})
	step := newConvertStep(codec.NewStreamDecoder(), r.fo, c.model, 0, second)
	if err := pumpStream(resp.Body, frames(a), r.s, step); err != nil || r.s.err != nil {
		return err
	}
	c.rl.Router.Health.SucceededKey(ch, ch.KeyIndex)
	rest := second.answer.String()
	tally.answer.addText(rest)
	u2 := second.usage.NonNegative()
	if u2.OutputTokens == 0 {
		u2.OutputTokens = tokenize.Count(c.model, rest)
	}
	if u2.InputTokens == 0 {
		u2.InputTokens = r.prompt() + tokenize.Count(c.model, delivered)
	}
	// The call is billed once: the first upstream's prompt, the whole
	// answer counted, at the first model's price.
	tally.usage = first
	tally.usage.OutputTokens = 0
	r.served = &failover{from: c.channel, to: ch, atChars: utf8.RuneCountInString(delivered), firstOut: firstOut, second: u2}
	return nil
}

// pumpStream pumps SSE or the adapter's framing.
func pumpStream(body io.Reader, fr func(io.Reader) protocol.EventReader, s *sink, step eventStep) error {
	if fr == nil {
		return pumpSSE(body, s, step)
	}
	return pumpFrames(body, fr, s, step)
}

// continuation is req asking for the rest of an answer of which delivered
// was sent: the text as the assistant's prefix on the messages wire, which
// continues a trailing assistant turn, and elsewhere the text plus an
// instruction to continue it exactly.
func continuation(req *ir.Request, model, delivered string, wire protocol.Format) *ir.Request {
	out := *req
	out.Model, out.Stream, out.IncludeUsage = model, true, true
	msgs := make([]ir.Message, 0, len(req.Messages)+2)
	msgs = append(msgs, req.Messages...)
	if wire == protocol.Anthropic {
		// The wire refuses a final assistant turn ending in white space.
		msgs = append(msgs, ir.Message{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartText, Text: strings.TrimRight(delivered, " \t\r\n")}}})
	} else {
		msgs = append(msgs, ir.Message{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartText, Text: delivered}}},
			ir.Message{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: continueInstruction}}})
	}
	out.Messages = msgs
	return &out
}

// row puts a served failover on the row: both upstreams' cost in
// other.upstream_cost_usd, the first's at the prompt billed and the output
// it produced. billed is the usage the call was billed for.
func (r *resumer) row(o *logOther, billed ir.Usage) {
	f, c := r.served, r.c
	if f == nil || c.price == nil {
		return
	}
	in := ir.Usage{InputTokens: billed.InputTokens, CacheReadTokens: billed.CacheReadTokens, CacheWriteTokens: billed.CacheWriteTokens,
		OutputTokens: f.firstOut}
	cost := admission.UpstreamCost(c.price, f.from.Cost, c.model, f.from.MapModel(c.model), in, c.price.CallCost(1))
	second := admission.UpstreamCost(c.price, f.to.Cost, c.model, f.to.MapModel(c.model), f.second, c.price.CallCost(1))
	o.UpstreamCostUSD = admission.USD(new(big.Rat).Add(cost, second))
}

// failoverDetail is other.failover.
func (f *failover) detail() map[string]any {
	return map[string]any{"from": f.from.ID, "to": f.to.ID, "at_chars": f.atChars}
}

// bill adds other.failover to the charge of a continued stream.
func (r *resumer) bill(bill func(ir.Usage) charge) func(ir.Usage) charge {
	return func(u ir.Usage) charge {
		ch := bill(u)
		if r.served != nil {
			ch.detail = map[string]any{"failover": r.served.detail()}
		}
		return ch
	}
}
