package relay

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// call is the state of one relayed chat call as it moves through the stages.
type call struct {
	rl        *Relay
	sf        surface
	r         *http.Request
	w         http.ResponseWriter
	start     time.Time
	principal *auth.Principal
	raw       []byte
	req       *ir.Request
	model     string
	price     *billing.Price
	prompt    int
	hold      *billing.Hold
	channel   *routing.Channel
	// wrote is set once a byte reached the client: no retry after that.
	wrote  bool
	usage  ir.Usage
	status int
}

func (rl *Relay) chatHandler(sf surface) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{rl: rl, sf: sf, r: r, w: w, start: time.Now(), status: http.StatusOK}
		if err := c.run(); err != nil {
			c.fail(err)
		}
		rl.Metrics.observe(string(sf.codec.Format()), c.status, time.Since(c.start).Seconds())
	})
}

// run executes the stages in order; each returns a client-safe error.
func (c *call) run() error {
	// The key (or session) is checked from the headers before the body is
	// read: an anonymous caller must not make the gateway take 32 MB first.
	if err := c.authenticate(); err != nil {
		return err
	}
	if err := c.accept(); err != nil {
		return err
	}
	if err := c.chooseGroup(); err != nil {
		return err
	}
	if err := c.decode(); err != nil {
		return err
	}
	if err := c.admit(); err != nil {
		return err
	}
	plan := c.rl.Router.Plan(c.principal.Group, c.model, c.rl.Options.RetryCount+1, chatCapable)
	if len(plan) == 0 {
		c.hold.Refund(context.WithoutCancel(c.r.Context()), nil)
		return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "no_available_channel",
			Message: "no channel is available for model " + c.model + " right now"}
	}
	return c.attemptAll(plan)
}

// accept reads the body once, within the size limit, so that every attempt
// can replay it.
func (c *call) accept() error {
	raw, err := readLimited(c.w, c.r, c.rl.Options.BodyLimit)
	if err != nil {
		return err
	}
	c.raw = raw
	return nil
}

// readLimited reads a request body within limit, answering 413 past it.
func readLimited(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *ir.Error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &ir.Error{Status: 413, Kind: ir.KindRequestTooLarge, Code: "request_too_large",
				Message: "the request body is larger than the gateway accepts"}
		}
		return nil, ir.BadRequest("invalid_body", "the request body could not be read")
	}
	return raw, nil
}

func (c *call) authenticate() error {
	if c.sf.playground {
		p, err := c.rl.playgroundSession(c.r)
		if err != nil {
			return err
		}
		c.principal = p
		return nil
	}
	p, err := c.rl.Keys.Authenticate(c.r.Context(), c.sf.key(c.r))
	if err != nil {
		return err
	}
	c.principal = p
	return nil
}

// chooseGroup applies the playground's group choice, which lives in the
// body and so can only be checked once the session has been.
func (c *call) chooseGroup() error {
	if !c.sf.playground {
		return nil
	}
	p, err := inGroup(c.principal, gjson.GetBytes(c.raw, "group").String())
	if err != nil {
		return err
	}
	c.principal = p
	return nil
}

func (c *call) decode() error {
	if len(c.raw) == 0 {
		return ir.BadRequest("invalid_body", "the request body is empty; send a JSON object")
	}
	req, err := c.sf.codec.DecodeRequest(c.raw)
	if err != nil {
		return err
	}
	if c.sf.model != "" {
		req.Model = c.sf.model
	}
	if c.sf.stream {
		req.Stream = true
	}
	if req.Model == "" {
		return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "missing_model", Param: "model", Message: "model is required"}
	}
	c.req, c.model = req, req.Model
	return nil
}

// priceFor checks that p may use model and that the model is routed for
// p's group, and returns the model's price: the admission every surface
// shares before it reserves.
func (rl *Relay) priceFor(p *auth.Principal, model string) (*billing.Price, error) {
	if !p.Allows(model) {
		return nil, &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "model_not_allowed",
			Message: "this API key may not use model " + model}
	}
	if !rl.Router.Table().Serves(p.Group, model) {
		return nil, &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "model_not_found", Param: "model",
			Message: "model " + model + " does not exist or is not available to this key"}
	}
	return rl.Billing.Price(model)
}

// admit checks the key may use the model, prices it and reserves quota.
func (c *call) admit() error {
	price, err := c.rl.priceFor(c.principal, c.model)
	if err != nil {
		return err
	}
	c.price = price
	c.prompt = countPrompt(c.model, c.req)
	maxOut := c.rl.Options.DefaultCompletionTokens
	if c.req.MaxTokens != nil && *c.req.MaxTokens > 0 {
		maxOut = *c.req.MaxTokens
	}
	estimate := c.rl.Billing.TokenQuota(price, ir.Usage{InputTokens: c.prompt, OutputTokens: maxOut}, c.principal.Group) +
		c.rl.Billing.CostQuota(price.CallCost(1), c.principal.Group)
	acct := billing.Account{UserID: c.principal.UserID, TokenID: c.principal.TokenID, Group: c.principal.Group}
	hold, err := c.rl.Billing.Reserve(c.r.Context(), acct, c.rl.Billing.NewRequestKey("chat"), estimate)
	if err != nil {
		return err
	}
	c.hold = hold
	return nil
}

func chatCapable(ch *routing.Channel) bool { return !isTaskOnly(ch.Type) }

// settle charges the real usage (counting tokens when the upstream reported
// none) and writes the consume row. It runs even when the client went away.
func (c *call) settle(outputText func() string) {
	ctx := context.WithoutCancel(c.r.Context())
	u := c.usage.NonNegative()
	if u.InputTokens == 0 {
		u.InputTokens = c.prompt
	}
	if u.OutputTokens == 0 && outputText != nil {
		u.OutputTokens = tokenize.Count(c.model, outputText())
	}
	c.usage = u
	charge := c.rl.Billing.TokenQuota(c.price, u, c.principal.Group) + c.rl.Billing.CostQuota(c.price.CallCost(1), c.principal.Group)
	c.hold.Settle(ctx, charge, c.logRow(u))
}

func (c *call) logRow(u ir.Usage) store.UsageLog {
	row := store.UsageLog{UserID: c.principal.UserID, TokenID: c.principal.TokenID, Model: c.model,
		PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens,
		LatencyMS: time.Since(c.start).Milliseconds(), CreatedAt: time.Now().UTC()}
	if c.channel != nil {
		row.ChannelID = c.channel.ID
	}
	row.Other = otherJSON(c, u)
	return row
}

// fail answers an error in the surface's dialect, refunding any hold.
func (c *call) fail(err error) {
	e := ir.As(err)
	if e.Status == 500 && e.Code == "internal_error" {
		c.rl.Logger.Error("relay failed", "err", err)
	}
	if c.hold != nil {
		row := c.logRow(ir.Usage{})
		c.hold.Refund(context.WithoutCancel(c.r.Context()), &row)
	}
	c.status = e.Status
	if c.wrote {
		return
	}
	writeError(c.w, c.sf.codec, e)
}

// writeError renders e in codec's dialect.
func writeError(w http.ResponseWriter, codec protocol.Codec, e *ir.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(codec.EncodeError(e))
}

func countPrompt(model string, req *ir.Request) int {
	texts := make([][]string, 0, len(req.Messages)+1)
	if len(req.System) > 0 {
		texts = append(texts, partTexts(req.System))
	}
	for _, m := range req.Messages {
		texts = append(texts, partTexts(m.Parts))
	}
	return tokenize.Messages(model, texts)
}

func partTexts(parts []ir.Part) []string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		switch p.Kind {
		case ir.PartText:
			out = append(out, p.Text)
		case ir.PartToolCall:
			out = append(out, p.ToolCall.Name, p.ToolCall.Arguments)
		case ir.PartToolResult:
			out = append(out, partTexts(p.ToolResult.Content)...)
		case ir.PartThinking:
			out = append(out, p.Thinking.Text)
		}
	}
	return out
}
