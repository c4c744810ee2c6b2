package relay

import (
	"context"
	"math/big"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/obs"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// callCore is the one admitted-call core every surface runs on: chat in the
// three client formats, every other /v1 endpoint, responses and realtime.
// It alone admits (prices and reserves), plans and attempts channels,
// settles, fails (refund once, error row always) and builds the usage row,
// so a rule about money is written once and holds on every surface.
type callCore struct {
	rl *Relay
	w  http.ResponseWriter
	r  *http.Request
	// name is the surface or endpoint in metrics and the usage row.
	name  string
	start time.Time
	// dialect renders errors for the client.
	dialect protocol.Format

	principal *auth.Principal
	// table is the routing snapshot the call pinned at admission.
	table *routing.Table
	model string
	price *billing.Price
	hold  *billing.Hold
	// ticket is the call's standing with traffic control (limits, lease,
	// budget share), ended with the hold.
	ticket   admission.Ticket
	channel  *routing.Channel
	attempts []attemptRecord
	// attemptsBuf holds the first attempts without an allocation.
	attemptsBuf [3]attemptRecord
	// wrote is set once a byte reached the client: no retry after that.
	wrote  bool
	stream bool
	status int
	// bg is the request's context without its cancellation, made once
	// when the call starts (goroutines of a realtime session share it):
	// settling and refunding outlive a client that left.
	bg context.Context
	// rowOther is the surface's own part of the usage row's other.
	rowOther func(o *logOther)
	// sizer and filter are the surface's estimate and channel filter, kept
	// to plan and reserve a fallback model the same way.
	sizer  estimator
	filter func(*routing.Channel) bool
	// fallbackFrom is the requested model while a fallback model serves.
	fallbackFrom string
	// aff is the call's cache affinity; strategy how its channels were
	// ordered (the usage row's other.affinity and other.strategy).
	aff      affinity
	strategy string
	// inflight is the attempt under way: a row written while it runs (the
	// answer settles inside its attempt) lists it as the one that served.
	inflight      *routing.Channel
	inflightSince time.Time
	// span is the client span of the attempt under way, serverSpan the
	// request's (tracing on only).
	span, serverSpan trace.Span
	// line is set when the call is a batch line (RunLine).
	line *lineRun
	// guards is what the guardrails did (the row's other.guardrails).
	guards []guardrail.Record
	// cancelUpstream ends the attempt under way's upstream request (nil
	// between attempts): the stream tail calls it when the client leaves.
	cancelUpstream context.CancelFunc
	// content is the call's content capture (content.go); nil when its
	// key and group keep none.
	content *contentlog.Capture
}

// exactly wraps an estimate that is always exact.
func exactly(f func(*billing.Price) charge) estimator {
	return func(p *billing.Price, _ bool) charge { return f(p) }
}

// newCore starts the core of a call. It fills the core where it lives
// (begin) rather than returning one by value: a returned callCore (1.4 KB) is
// built in the handler's frame and copied, and that frame stays on the
// handler goroutine's stack for as long as a streamed answer is open.
func newCore(rl *Relay, w http.ResponseWriter, r *http.Request, name string, dialect protocol.Format) *callCore {
	c := new(callCore)
	c.begin(rl, w, r, name, dialect)
	return c
}

// begin fills a zero core in place for a call that starts now.
func (c *callCore) begin(rl *Relay, w http.ResponseWriter, r *http.Request, name string, dialect protocol.Format) {
	c.rl, c.w, c.r, c.name, c.dialect = rl, w, r, name, dialect
	c.start, c.status = time.Now(), http.StatusOK
	c.bg, c.line = context.WithoutCancel(r.Context()), lineOf(r.Context())
}

// charge is what a call costs: tokens at the model's token price plus a
// dollar amount computed from the model's per-call and extra prices. Every
// surface expresses its estimate and its bill as one, and billing.Charge
// rounds their exact sum once.
type charge struct {
	usage ir.Usage
	usd   *big.Rat
	// detail goes to the usage log's other (images, seconds, characters).
	detail map[string]any
}

// attemptRecord is one upstream attempt, for the usage row's routing
// explanation (other.attempts).
type attemptRecord = admission.Attempt

// gate is the money seam the relay shares with the task service.
func (rl *Relay) gate() admission.Gate {
	return admission.Gate{Billing: rl.Billing, Limits: rl.Limits, Plans: rl.Plans}
}

// background is the context for work that must finish even when the client
// went away: settling, refunding, recording.
func (c *callCore) background() context.Context { return c.bg }

// estimator sizes a call's reservation at its price. Asked first with
// exact false, it may answer a cheap upper bound (no tokenizer); only when
// that does not fit is it asked again with exact true.
type estimator func(p *billing.Price, exact bool) charge

// admit checks that the key may use the model and that it is routed for the
// key's group, prices it, and reserves the estimate. The estimate sees the
// price, so per-call parts are reserved exactly as they will be charged.
func (c *callCore) admit(estimate estimator) error {
	c.table = c.rl.Router.Table()
	c.sizer = estimate
	price, err := c.rl.priceOn(c.table, c.principal, c.model)
	if err != nil {
		return err
	}
	c.price = c.linePrice(price)
	if err := c.limit(estimate); err != nil {
		return err
	}
	return c.reserveEstimate(-1)
}

// limit counts the call against the rate limits of its key, user, group
// and model before any upstream call, refusing it with 429 when one is
// reached. A tokens-per-minute limit is counted on the exact estimate (the
// tokenizer's prompt count), corrected at settlement. The rate-limit
// headers go on every answer from here on.
func (c *callCore) limit(estimate estimator) error {
	return c.rl.gate().Limit(c.r.Context(), &c.ticket, c.principal, c.model, c.w.Header(), func() int64 {
		u := estimate(c.price, true).usage
		return int64(u.InputTokens) + int64(u.OutputTokens)
	})
}

// reserve takes amount under a fresh request key (realtime takes one per
// response), after holding it against the period budgets that apply.
func (c *callCore) reserve(amount int64) error {
	if c.line != nil {
		return c.line.hold(amount)
	}
	hold, err := c.rl.gate().Reserve(c.r.Context(), c.background(), &c.ticket, admission.Account(c.principal),
		c.rl.Billing.NewRequestKey(c.name), amount, c.w.Header())
	if err != nil {
		return err
	}
	c.hold = hold
	return nil
}

// refund returns the whole reservation, budgets included; row, when not
// nil, is written as the error row.
func (c *callCore) refund(row *store.UsageLog) {
	c.ticket.Refund(c.background(), c.hold, row)
}

// quota prices a charge with the one pricing function.
func (c *callCore) quota(ch charge) (int64, error) {
	return c.rl.gate().Quota(c.price, ch.usage, ch.usd, c.principal.Group)
}

// plan is the routing snapshot's attempt list for the call's model, or the
// 503 every surface answers when no channel can take it. The list may be
// empty when a fallback model has channels: attemptAll goes on to it.
func (c *callCore) plan(filter func(*routing.Channel) bool) ([]*routing.Channel, error) {
	c.filter = filter
	plan := c.planFor(c.model, c.price)
	if len(plan) == 0 && c.aff.first == nil && !c.fallbackPlannable() {
		return nil, &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "no_available_channel",
			Message: "no channel is available for model " + c.model + " right now"}
	}
	return plan, nil
}

// planFor plans model at price under the model's strategy; the strategy of
// the requested model is the row's.
func (c *callCore) planFor(model string, price *billing.Price) []*routing.Channel {
	o := c.planOptions(model, price, c.rl.Options.RetryCount+1)
	if c.strategy == "" {
		c.strategy = o.Strategy
	}
	return c.table.PlanWith(c.rl.Router.Health, o)
}

// plannable says whether some channel passing filter could serve the model
// on the call's pinned snapshot, so a no-channel answer is judged on the
// same table the plan was made from.
func (c *callCore) plannable(filter func(*routing.Channel) bool) bool {
	return len(c.table.Plan(c.rl.Router.Health, c.principal.Group, c.model, 1, filter)) > 0
}

// attemptAll tries the planned channels under the retry rule every surface
// shares (tryChannels), recording each attempt for the usage row. When
// every channel failed before the first byte, the model's fallbacks are
// tried in order (CONTRACT §10 "Fallback models").
func (c *callCore) attemptAll(plan []*routing.Channel, attempt func(*routing.Channel) error) error {
	var err error
	exhausted := true
	if len(plan) > 0 || c.aff.first != nil {
		err, exhausted = c.tryPlan(plan, c.aff.first, attempt)
	}
	if !exhausted || c.price == nil || len(c.price.Raw.Fallbacks) == 0 {
		return err
	}
	return c.tryFallbacks(err, attempt)
}

// tryFallbacks tries the model's fallbacks in order once every planned
// channel failed before the first byte. It is a function of its own so that
// attemptAll's frame, which lies under every exchange and every open
// stream, holds none of it.
func (c *callCore) tryFallbacks(err error, attempt func(*routing.Channel) error) error {
	requested, price := c.model, c.price
	for _, fb := range price.Raw.Fallbacks {
		if c.r.Context().Err() != nil {
			break
		}
		fplan, fprice := c.fallbackPlan(fb)
		if len(fplan) == 0 || !c.switchModel(fb, fprice) {
			c.model, c.price = requested, price
			continue
		}
		c.fallbackFrom = requested
		ferr, fexhausted := c.tryPlan(fplan, nil, attempt)
		if ferr == nil || !fexhausted {
			return ferr // served, or failed in a way the client must see
		}
		err = ferr
	}
	// The error row names the model the client asked for.
	c.model, c.price, c.fallbackFrom = requested, price, ""
	if err == nil {
		err = &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "no_available_channel",
			Message: "no channel is available for model " + requested + " right now"}
	}
	return err
}

// tryPlan attempts pin (a session's pinned key; nil for none) and then the
// plan.
func (c *callCore) tryPlan(plan []*routing.Channel, pin *routing.Channel, attempt func(*routing.Channel) error) (error, bool) {
	return c.rl.tryChannels(c.r.Context(), plan, pin, func() bool { return c.wrote }, func(ch *routing.Channel) error {
		c.channel = ch
		began := time.Now()
		if c.attempts == nil {
			c.attempts = c.attemptsBuf[:0]
		}
		c.inflight, c.inflightSince = ch, began
		orig := c.r
		if c.rl.Tracer.On() {
			c.startAttemptSpan(ch)
		}
		ch.Begin()
		err := attempt(ch)
		ch.End()
		c.endAttempt(ch, began, orig, err)
		return err
	})
}

// endAttempt records an attempt that is over. It is not inlined in
// tryPlan's closure, whose frame lies under the whole stream.
func (c *callCore) endAttempt(ch *routing.Channel, began time.Time, orig *http.Request, err error) {
	c.inflight = nil
	took := time.Since(began)
	rec := attemptRecord{ChannelID: ch.ID, KeyIndex: ch.KeyIndex, Status: http.StatusOK, LatencyMS: took.Milliseconds()}
	if err != nil {
		e := ir.As(err)
		rec.Status, rec.ErrorCode = e.Status, e.Code
		if rec.ErrorCode == "" {
			rec.ErrorCode = "upstream_error" // the upstream named none
		}
	}
	c.attempts = append(c.attempts, rec)
	c.rl.Metrics.upstreamDone(ch.Name, took.Seconds())
	if c.span != nil {
		endAttemptSpan(c.span, rec)
		c.span, c.r = nil, orig
	}
}

// fallbackPlan plans a fallback model on the pinned snapshot, under the same
// checks as the requested model: the key may use it, the group reaches it,
// and it has a price.
func (c *callCore) fallbackPlan(model string) ([]*routing.Channel, *billing.Price) {
	price, err := c.rl.priceOn(c.table, c.principal, model)
	if err != nil {
		return nil, nil
	}
	return c.planFor(model, price), c.linePrice(price)
}

func (c *callCore) fallbackPlannable() bool {
	if c.price == nil {
		return false
	}
	for _, fb := range c.price.Raw.Fallbacks {
		if plan, _ := c.fallbackPlan(fb); len(plan) > 0 {
			return true
		}
	}
	return false
}

// switchModel makes model, at its own price, the one the call serves and
// bills. The reservation must cover the fallback's estimate: when the one
// taken for the requested model does, it stays (settlement returns the
// difference); otherwise a new one is taken for the fallback's estimate
// first and the old one released, so the client never holds less than the
// call may cost. It reports false, changing nothing, when the fallback
// cannot be reserved.
func (c *callCore) switchModel(model string, price *billing.Price) bool {
	prevModel, prevPrice := c.model, c.price
	c.model, c.price = model, price
	if (c.hold == nil && c.line == nil) || c.sizer == nil {
		return true
	}
	// The new reservation replaces the ticket's hold and budget share:
	// the old ones are given back together, or the budget would keep the
	// first reservation's share for good.
	old, oldBudget := c.hold, c.ticket.Budget
	if err := c.reserveEstimate(c.reserved()); err != nil {
		c.model, c.price, c.hold = prevModel, prevPrice, old
		c.ticket.Budget, c.ticket.Hold = oldBudget, old
		c.rl.Logger.InfoContext(c.r.Context(), "fallback model not reserved", "surface", c.name, "model", model, "err", err)
		return false
	}
	if old != nil && c.hold != old {
		(&admission.Ticket{Budget: oldBudget}).Refund(c.background(), old, nil)
	}
	return true
}

// reserveEstimate reserves the call's estimate at its current price unless
// held (the amount already reserved; -1 for none) covers it. The cheap
// bound is tried first; when it does not fit (or cannot be priced) the
// counted figure is, and a refusal is decided on that one.
func (c *callCore) reserveEstimate(held int64) error {
	bound, err := c.holdQuota(c.sizer(c.price, false))
	if err == nil {
		if bound <= held {
			return nil
		}
		if err = c.reserve(bound); err == nil {
			return nil
		}
	}
	exact, exactErr := c.holdQuota(c.sizer(c.price, true))
	if exactErr != nil {
		return exactErr
	}
	if exact <= held {
		return nil
	}
	if exact == bound && err != nil {
		return err
	}
	return c.reserve(exact)
}

// holdQuota prices an estimate for a reservation: its output tokens at the
// dearest output rate (output or reasoning) of the tier its input reaches,
// since how much of the output will be reasoning is only known afterwards.
func (c *callCore) holdQuota(ch charge) (int64, error) {
	return c.rl.gate().HoldQuota(c.price, ch.usage, ch.usd, c.principal.Group)
}

// reserved is what the call holds: its hold, or a batch line's estimate.
func (c *callCore) reserved() int64 {
	if c.line != nil {
		return c.line.reserved
	}
	return c.hold.Reserved
}

// settleAndRenew settles the current charge of a call that is billed in
// several charges (realtime: one per response) and reserves amount for the
// next one.
func (c *callCore) settleAndRenew(ch charge, amount int64) error {
	c.settle(ch)
	c.hold, c.ticket.Budget = nil, nil
	return c.reserve(amount)
}

// fail answers an error in the surface's dialect. An admitted call is
// refunded exactly once and always leaves an error row in the usage log.
func (c *callCore) fail(err error) {
	e := ir.As(err)
	if e.Status == 500 {
		c.rl.Logger.ErrorContext(c.r.Context(), "relay failed", "surface", c.name, "err", err)
	}
	if c.hold != nil {
		row := c.logRow(charge{}, false)
		c.refund(&row)
	}
	c.status = e.Status
	if !c.wrote {
		writeError(c.w, c.rl.Codecs[c.dialect], e)
	}
}

// finish records the call in the metrics and gives back its concurrency
// slots.
func (c *callCore) finish() {
	c.ticket.Release(c.background())
	c.endContent()
	if c.aff.on {
		c.rl.Metrics.affinityResult(c.metricModel(), c.aff.result())
	}
	c.rl.Metrics.observe(c.name, c.metricModel(), c.metricChannel(), c.status, time.Since(c.start).Seconds())
}

// metricModel is the call's model as a metric label: a model of the price
// table, or "other" for a name the call was refused on before it was
// priced, so clients cannot add series by inventing model names.
func (c *callCore) metricModel() string {
	if c.price == nil {
		return metricsOtherModel
	}
	return c.model
}

// metricChannel is the name of the channel that served (or last failed).
func (c *callCore) metricChannel() string {
	if c.channel == nil {
		return metricsNoChannel
	}
	return c.channel.Name
}

// logOther is the usage row's other, in the one shape every surface and
// the task service share (the surface adds its fields through rowOther,
// and a charge its detail).
type logOther = admission.Other

// logRow builds the usage row of the call for usage ch; a consume row
// records what the call cost upstream.
func (c *callCore) logRow(ch charge, consume bool) store.UsageLog {
	u := ch.usage
	row := admission.Row(admission.Account(c.principal), c.model, obs.RequestID(c.r.Context()), u, c.start)
	o := logOther{Endpoint: c.name, Stream: c.stream, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens,
		Reasoning: u.ReasoningTokens, GroupRatio: c.rl.Billing.Ratio(c.principal.Group), Attempts: c.attempts,
		FallbackFrom: c.fallbackFrom, Strategy: c.strategy, Guardrails: c.guards}
	if c.aff.on {
		o.Affinity = c.aff.result()
	}
	if c.inflight != nil {
		// Settled inside the attempt that answered: it is the last one. The
		// record may take c.attempts' spare slot; o is marshalled below,
		// before tryPlan appends the attempt's own record there.
		o.Attempts = append(c.attempts, attemptRecord{ChannelID: c.inflight.ID, KeyIndex: c.inflight.KeyIndex,
			Status: http.StatusOK, LatencyMS: time.Since(c.inflightSince).Milliseconds()})
	}
	if c.price != nil {
		o.PriceVersion = c.price.Version
	}
	var cost *store.ChannelCost
	if c.channel != nil {
		row.ChannelID = c.channel.ID
		o.UpstreamModel = c.channel.MapModel(c.model)
		cost = c.channel.Cost
	}
	if consume && c.price != nil {
		o.UpstreamCostUSD = admission.UpstreamCostUSD(c.price, cost, c.model, o.UpstreamModel, u, ch.usd)
	}
	if c.rowOther != nil {
		c.rowOther(&o)
	}
	if c.content != nil && c.content.Row() {
		o.Content = c.content.Ref
	}
	admission.SetOther(&row, &o, ch.detail)
	return row
}
