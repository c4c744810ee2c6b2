package relay

import (
	"encoding/json"
	"math/big"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// estimateFormats are the chat formats POST /api/pricing/estimate reads.
var estimateFormats = map[string]protocol.Format{"openai": protocol.OpenAI, "messages": protocol.Anthropic, "gemini": protocol.Gemini}

// Estimate is the answer of POST /api/pricing/estimate: what admitting the
// body would reserve, and the least and most it could be charged.
type Estimate struct {
	Model           string  `json:"model"`
	PriceVersion    int64   `json:"price_version"`
	InputTokens     int     `json:"input_tokens"`
	MaxOutputTokens int     `json:"max_output_tokens"`
	HoldQuota       int64   `json:"hold_quota"`
	MinQuota        int64   `json:"min_quota"`
	MaxQuota        int64   `json:"max_quota"`
	MinUSD          float64 `json:"min_usd"`
	MaxUSD          float64 `json:"max_usd"`
}

// pricingEstimate serves POST /api/pricing/estimate for an API key or a
// console session. It runs a chat call's admission up to the reservation
// and stops there: the same checks, the same price version, the same
// estimate and the same hold arithmetic, so the figure it answers is the
// hold the call would take. Nothing is reserved or counted.
func (rl *Relay) pricingEstimate(w http.ResponseWriter, r *http.Request) {
	e, err := rl.estimate(w, r)
	if err != nil {
		ie := ir.As(err)
		apijson.WriteError(w, ie.Status, apijson.Error{Code: ie.Code, Message: ie.Message})
		return
	}
	_ = apijson.Write(w, http.StatusOK, e)
}

func (rl *Relay) estimate(w http.ResponseWriter, r *http.Request) (*Estimate, error) {
	p, err := rl.estimatePrincipal(r)
	if err != nil {
		return nil, err
	}
	raw, ie := readLimited(w, r, rl.Options.BodyLimit)
	if ie != nil {
		return nil, ie
	}
	var in struct {
		Model  string          `json:"model"`
		Format string          `json:"format"`
		Body   json.RawMessage `json:"body"`
	}
	if _, dup := protocol.CheckMembers(raw); dup != nil {
		return nil, dup
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, ir.BadRequest("invalid_body", "the body must be a JSON object with model, format and body")
	}
	if in.Format == "" {
		in.Format = "openai"
	}
	format, ok := estimateFormats[in.Format]
	if !ok {
		return nil, &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_field", Param: "format",
			Message: "format must be openai, messages or gemini"}
	}
	if len(in.Body) == 0 || in.Body[0] != '{' {
		return nil, &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_field", Param: "body",
			Message: "body must be a request body (a JSON object) in the given format"}
	}
	req, err := rl.Codecs[format].DecodeRequest(in.Body)
	if err != nil {
		return nil, err
	}
	if in.Model != "" {
		req.Model = in.Model
	}
	if req.Model == "" {
		return nil, &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "missing_model", Param: "model", Message: "model is required"}
	}
	c := &call{req: req}
	c.begin(rl, w, r, "estimate", format)
	c.principal, c.model = p, req.Model
	price, err := rl.priceOn(rl.Router.Table(), p, c.model)
	if err != nil {
		return nil, err
	}
	g := rl.gate()
	bound, exact := c.estimate(price, false), c.estimate(price, true)
	hold, err := g.HoldQuota(price, bound.usage, bound.usd, p.Group)
	if err != nil {
		return nil, err
	}
	least, err := g.Quota(price, ir.Usage{InputTokens: exact.usage.InputTokens}, exact.usd, p.Group)
	if err != nil {
		return nil, err
	}
	most, err := g.HoldQuota(price, exact.usage, exact.usd, p.Group)
	if err != nil {
		return nil, err
	}
	perUSD := rl.Billing.QuotaPerUSD()
	return &Estimate{Model: c.model, PriceVersion: price.Version, InputTokens: exact.usage.InputTokens,
		MaxOutputTokens: exact.usage.OutputTokens, HoldQuota: hold, MinQuota: least, MaxQuota: most,
		MinUSD: quotaUSD(least, perUSD), MaxUSD: quotaUSD(most, perUSD)}, nil
}

// estimatePrincipal is the caller: an API key in any of the surfaces'
// spellings, else the console session.
func (rl *Relay) estimatePrincipal(r *http.Request) (*auth.Principal, error) {
	if key := anyKey(r); key != "" {
		return rl.Keys.Authenticate(r.Context(), key)
	}
	if rl.Session != nil {
		if p, ok := rl.Session(r); ok {
			return p, nil
		}
	}
	return nil, &ir.Error{Status: 401, Kind: ir.KindAuthentication, Code: "unauthorized",
		Message: "send an API key as a Bearer token, or sign in"}
}

func anyKey(r *http.Request) string {
	if k := messagesKey(r); k != "" {
		return k
	}
	return altKey(r)
}

// quotaUSD is quota in US dollars, for display.
func quotaUSD(quota, perUSD int64) float64 {
	f, _ := new(big.Rat).SetFrac64(quota, perUSD).Float64()
	return f
}
