package relay

import (
	"bytes"
	"context"
	"math/big"
	"net/http"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// LineResult is the outcome of one batch line run through the driver: the
// answer the client would have had, and, when it succeeded, its usage and
// its charge at the batch price.
type LineResult struct {
	Status int
	Body   []byte
	// OK is set when the line was answered and priced.
	OK        bool
	Model     string
	ChannelID int64
	Usage     ir.Usage
	Quota     int64
	// Cost is the line's exact charge in list dollars before the group
	// ratio, so the batch can sum its lines and round once per row (nil
	// when the charge is the reservation because the answer could not be
	// priced: Quota is then the charge).
	Cost *big.Rat
	// Reserved is what the line took from its batch's hold.
	Reserved int64
}

// LineTake takes want more from a batch's hold for one of its lines and
// answers what it granted (at least want), or refuses the line (a 402
// insufficient_quota when neither the hold nor the balance can cover it).
type LineTake func(want int64) (int64, error)

// lineRun is a batch line's part of a call: who it runs as, and where its
// charge goes instead of a hold of its own. The batch reserved the whole
// estimate up front and settles once at its end, so a line takes its
// estimate from the batch's hold (take), writes no usage row and refunds
// nothing; it still passes the key's allow-list, routing, rate limits and
// retries like a live call.
type lineRun struct {
	principal *auth.Principal
	// admitted is when the batch was admitted: the line is priced with the
	// version in effect then (zero: now).
	admitted time.Time
	reserved int64
	take     LineTake
	res      LineResult
	// billedRefusal: a guardrail refused the answer after the upstream
	// made it, so the line is billed though it answers 400 (CONTRACT §21).
	billedRefusal bool
}

// hold makes the line's reservation amount, taking what it lacks from the
// batch's hold.
func (l *lineRun) hold(amount int64) error {
	if amount <= l.reserved {
		return nil
	}
	if l.take == nil {
		l.reserved = amount
		return nil
	}
	got, err := l.take(amount - l.reserved)
	if err != nil {
		return err
	}
	l.reserved += got
	return nil
}

type lineKey struct{}

func lineOf(ctx context.Context) *lineRun {
	l, _ := ctx.Value(lineKey{}).(*lineRun)
	return l
}

// RunLine runs one line of a batch in this process through the surface of
// endpoint, as p, and returns what it answered. There is no HTTP hop: the
// line is a call of the same driver with the batch's key.
// take (may be nil) takes the line's reservation from its batch's hold.
func (rl *Relay) RunLine(ctx context.Context, p *auth.Principal, endpoint string, body []byte, admitted time.Time, take LineTake) LineResult {
	l := &lineRun{principal: p, admitted: admitted, take: take}
	r, err := http.NewRequestWithContext(context.WithValue(ctx, lineKey{}, l), http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		e := &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_url", Message: "the line's url is not valid"}
		return LineResult{Status: 400, Body: rl.Codecs[protocol.OpenAI].EncodeError(e)}
	}
	if gjson.GetBytes(body, "background").Bool() || gjson.GetBytes(body, "stream").Bool() {
		// A line's answer is one body settled at once: nothing follows it.
		e := &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_value",
			Message: "a batch line cannot stream or run in the background"}
		return LineResult{Status: 400, Body: rl.Codecs[protocol.OpenAI].EncodeError(e)}
	}
	r.Header.Set("Content-Type", "application/json")
	w := &lineWriter{header: http.Header{}, status: http.StatusOK}
	switch endpoint {
	case "/v1/chat/completions":
		rl.chatHandler(surface{codec: rl.Codecs[protocol.OpenAI], key: bearerKey}).ServeHTTP(w, r)
	case "/v1/embeddings":
		rl.endpointHandler(embeddingsEndpoint(), nil)(w, r)
	case "/v1/responses":
		rl.responsesCreate(w, r)
	case "/v1/messages":
		rl.chatHandler(surface{codec: rl.Codecs[protocol.Anthropic], key: messagesKey}).ServeHTTP(w, r)
	default:
		e := &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_url", Message: "a batch cannot call " + endpoint}
		return LineResult{Status: 400, Body: rl.Codecs[protocol.OpenAI].EncodeError(e)}
	}
	res := l.res
	res.Status, res.Body, res.Reserved = w.status, w.buf.Bytes(), l.reserved
	res.OK = res.OK && (w.status >= 200 && w.status < 300 || l.billedRefusal)
	return res
}

// lineWriter keeps a line's answer in memory: a line is one bounded
// request, not a file.
type lineWriter struct {
	header http.Header
	status int
	wrote  bool
	buf    bytes.Buffer
}

func (w *lineWriter) Header() http.Header { return w.header }

func (w *lineWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.buf.Write(b)
}

func (w *lineWriter) Flush() {}

// settleLine records a line's charge for its batch, which bills it.
func (c *callCore) settleLine(ch charge, amount int64) {
	c.rl.Metrics.settled(c.metricModel(), c.metricChannel(), ch.usage, amount)
	c.ticket.Lease.Settle(c.background(), int64(ch.usage.InputTokens)+int64(ch.usage.OutputTokens))
	c.line.res.OK, c.line.res.Model, c.line.res.Usage, c.line.res.Quota = true, c.model, ch.usage, amount
	if cost := c.price.Cost(ch.usage, ch.usd); c.quotaOf(cost) == amount {
		c.line.res.Cost = cost
	}
	if c.channel != nil {
		c.line.res.ChannelID = c.channel.ID
	}
}

// quotaOf is what an exact cost comes to for the call's group (-1 when it
// cannot be priced).
func (c *callCore) quotaOf(cost *big.Rat) int64 {
	q, err := c.rl.gate().CostQuota(cost, c.principal.Group)
	if err != nil {
		return -1
	}
	return q
}

// linePrice is the price a call pays: a batch line pays the model's batch
// price for lines the gateway runs.
func (c *callCore) linePrice(p *billing.Price) *billing.Price {
	if c.line == nil {
		return p
	}
	if !c.line.admitted.IsZero() {
		// p's own model: a fallback is priced before the call switches to it.
		if then, err := c.rl.Billing.PriceAt(p.Name, c.line.admitted); err == nil {
			p = then
		}
	}
	return billing.BatchPrice(p, false)
}
