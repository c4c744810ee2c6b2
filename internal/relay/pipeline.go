package relay

import (
	"errors"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// call is one chat call (any of the three client formats, or the
// playground) on the admitted-call core.
type call struct {
	callCore
	sf  surface
	raw []byte
	req *ir.Request
	// prompt is the tokenizer's count once counted is set.
	prompt  int
	counted bool
	usage   ir.Usage
	// redacted: a guardrail rewrote req, so it is encoded for every
	// channel rather than the client's bytes passed through.
	redacted bool
	// cache is the call's standing with the response cache (cache.go).
	cache responseCache
	// resume is the stream failover of the call's streamed answer (nil
	// when its model has none).
	resume *resumer
	// wire is the surface's channel filter (made once per surface), for
	// the call's hooks (chatHooks).
	wire func(*routing.Channel) bool
}

// answerStarted also lets go of the client's raw body: from the first byte
// on no other channel is tried, so nothing sends it again, and a streamed
// answer can keep the call alive for minutes with a prompt of megabytes.
func (c *call) answerStarted() {
	c.callCore.answerStarted()
	c.raw = nil
}

func (rl *Relay) chatHandler(sf surface) http.Handler {
	// A method value is a closure of its own: made here once, not per call.
	filter := rl.hasChatWire
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{sf: sf}
		c.begin(rl, w, r, string(sf.codec.Format()), sf.codec.Format())
		c.rowOther = c.chatOther
		c.cache = responseCache{core: &c.callCore, surface: c}
		c.wire = filter
		c.serve((*chatHooks)(c))
	})
}

// SessionHeader names a session for cache affinity when the body cannot.
const SessionHeader = "X-Turnpike-Session"

// session is the call's cache affinity session (CONTRACT §14), from the
// ids its format carries and the header, else its prompt's prefix.
func (c *call) session() (routing.Session, bool) {
	src := routing.SessionSources{Header: c.r.Header.Get(SessionHeader)}
	switch c.sf.codec.Format() {
	case protocol.OpenAI:
		// Only this format has the member, and it is not part of the IR.
		src.PromptCacheKey = gjson.GetBytes(c.raw, "prompt_cache_key").String()
		src.MetadataUserID, _ = c.req.Metadata["user_id"].(string)
		src.User = c.req.User
	case protocol.Anthropic:
		// The messages codec decodes metadata.user_id as the IR's user.
		src.MetadataUserID = c.req.User
	}
	return routing.SessionKey(c.principal.UserID, c.principal.Group, c.model, src, c.req), true
}

// read takes the body, applies the playground's group choice and decodes.
func (c *call) read() error {
	if err := c.accept(); err != nil {
		return err
	}
	if err := c.chooseGroup(); err != nil {
		return err
	}
	return c.decode()
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
	raw, err := readAllSized(http.MaxBytesReader(w, r.Body, limit), r.ContentLength, limit)
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

func (c *call) authenticate() (*auth.Principal, error) {
	if c.sf.playground {
		return c.rl.playgroundSession(c.r)
	}
	return c.rl.Keys.Authenticate(c.r.Context(), c.sf.key(c.r))
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
	c.req, c.model, c.stream = req, req.Model, req.Stream
	return nil
}

// priceOn checks, on the request's pinned routing snapshot, that p may use
// model and that the model is routed for p's group, and returns the model's
// price: the admission every surface shares before it reserves.
func (rl *Relay) priceOn(t *routing.Table, p *auth.Principal, model string) (*billing.Price, error) {
	return rl.gate().Price(t, p, model)
}

// modelOn is the model check of a surface that is not priced (token
// counting): the same check admission makes before it prices.
func (rl *Relay) modelOn(t *routing.Table, p *auth.Principal, model string) error {
	return rl.gate().Model(t, p, model)
}

// estimate is the reservation: the prompt and the most output the call may
// produce, plus the per-call price. The prompt is first bounded from its
// length, which costs nothing and is never below the tokenizer's count; the
// tokenizer runs only when that bound does not fit, or later when the
// upstream reports no usage.
func (c *call) estimate(price *billing.Price, exact bool) charge {
	prompt := promptBound(c.req)
	if exact {
		prompt = c.promptTokens()
	}
	maxOut := c.rl.Options.DefaultCompletionTokens
	if c.req.MaxTokens != nil && *c.req.MaxTokens > 0 {
		maxOut = *c.req.MaxTokens
	}
	return charge{usage: ir.Usage{InputTokens: prompt, OutputTokens: maxOut}, usd: price.OneCallCost()}
}

// promptTokens is the prompt counted with the tokenizer, once per call.
func (c *call) promptTokens() int {
	if !c.counted {
		c.prompt, c.counted = countPrompt(c.model, c.req), true
	}
	return c.prompt
}

// settleUsage charges the real usage (counting tokens when the upstream
// reported none) and writes the consume row. It runs even when the client
// went away.
func (c *call) settleUsage(outputText func() string) {
	u := c.usage.NonNegative()
	if u.InputTokens == 0 {
		u.InputTokens = c.promptTokens()
	}
	if u.OutputTokens == 0 && outputText != nil {
		u.OutputTokens = tokenize.Count(c.model, outputText())
	}
	c.usage = u
	c.settle(charge{usage: u, usd: c.price.OneCallCost()})
}

// chatOther names the client format (or the playground) instead of an
// endpoint in the usage row.
func (c *call) chatOther(o *logOther) {
	o.Endpoint, o.Surface = "", c.name
	if c.sf.playground {
		o.Surface = "playground"
	}
	o.Stream = c.req != nil && c.req.Stream
	if c.resume != nil {
		c.resume.row(o, c.usage)
	}
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

// promptBound is an upper bound of a prompt's tokens without tokenizing:
// a BPE token covers at least one byte, and each message adds the chat
// framing countPrompt adds.
func promptBound(req *ir.Request) int {
	n := 3
	if len(req.System) > 0 {
		n += 3 + partBytes(req.System)
	}
	for _, m := range req.Messages {
		n += 3 + partBytes(m.Parts)
	}
	return n
}

func partBytes(parts []ir.Part) int {
	n := 0
	for _, p := range parts {
		switch p.Kind {
		case ir.PartText:
			n += len(p.Text)
		case ir.PartToolCall:
			n += len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
		case ir.PartToolResult:
			n += partBytes(p.ToolResult.Content)
		case ir.PartThinking:
			n += len(p.Thinking.Text)
		}
	}
	return n
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
