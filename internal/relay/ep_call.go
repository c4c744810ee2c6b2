package relay

import (
	"context"
	"math"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// endpoint describes one OpenAI-style (or alternate-native embedding)
// surface that is not chat: how its model is found, what it requires, which
// channels may serve it, how it is sent, relayed and priced. Every endpoint
// runs the same flow as chat: authenticate, read, validate, admit, plan,
// attempt with the chat retry rule, relay, settle, record.
type endpoint struct {
	// name is the endpoint's name in metrics and in the usage log's other.
	name string
	// path is the upstream path on OpenAI-compatible channels.
	path string
	// dialect is the error dialect of the surface.
	dialect protocol.Format
	// form allows multipart/form-data bodies; required makes them mandatory.
	form, formOnly bool
	// defaultModel supplies the model when the request names none.
	defaultModel func(rl *Relay) string
	validate     func(c *epCall) error
	// filter drops channels that cannot serve this endpoint; nil keeps
	// those whose provider has path.
	filter func(rl *Relay, ch *routing.Channel) bool
	// estimate is the reservation; bill prices the answer. Both return a
	// charge whose tokens and dollar amount are summed exactly.
	estimate func(c *epCall) charge
	bill     func(c *epCall, body []byte) charge
	// send builds the upstream request; nil sends the client's body (model
	// rewritten) to path.
	send func(c *epCall, ctx context.Context, ch *routing.Channel, t upstream.Target) (*http.Request, func(), error)
	// relay answers the client from a 2xx upstream answer; nil passes the
	// body through as it is.
	relay func(c *epCall, ch *routing.Channel, resp *http.Response) error
	// hostProtocol names the task-plugin host protocol that may take the
	// request over for the models a plugin claims ("" for none).
	hostProtocol string
	// noChannel is the error when no channel passes the filter.
	noChannel func(c *epCall) error
	// guard names the members (or form fields) of the request that hold
	// text the upstream reads, for the request-stage guardrails; answer
	// names those of a JSON answer for the response stage (CONTRACT §21).
	guard, answer []string
}

// input is the client's request body: JSON or a multipart form.
type input struct {
	raw  []byte
	form *form
	// overrides are form fields a guardrail redacted.
	overrides map[string]string
}

// str returns a string field of either body kind.
func (in *input) str(name string) string {
	if in.form != nil {
		v, _ := in.form.field(name)
		return v
	}
	return gjson.GetBytes(in.raw, name).String()
}

// has reports whether a field is present and not null.
func (in *input) has(name string) bool {
	if in.form != nil {
		_, ok := in.form.field(name)
		return ok
	}
	v := gjson.GetBytes(in.raw, name)
	return v.Exists() && v.Type != gjson.Null
}

// epCall is one call of an endpoint on the admitted-call core.
type epCall struct {
	callCore
	ep *endpoint
	in input
	// pathModel is the model named by the URL, if any.
	pathModel string
	// texts are the inputs of an embedding call, decoded once.
	texts []string
	// dims is the vector size an alternate-native embedding call asks for
	// (0: the model's own).
	dims int
}

func (rl *Relay) newEpCall(ep *endpoint, w http.ResponseWriter, r *http.Request) *epCall {
	c := &epCall{ep: ep}
	c.begin(rl, w, r, ep.name, ep.dialect)
	return c
}

func (rl *Relay) endpointHandler(ep *endpoint, pathModel func(*http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := rl.newEpCall(ep, w, r)
		if pathModel != nil {
			c.pathModel = pathModel(r)
		}
		c.serve()
	}
}

func (c *epCall) serve() {
	defer func() {
		if c.in.form != nil {
			c.in.form.close()
		}
	}()
	c.callCore.serve(c.hooks())
}

// hooks are the endpoint's hooks for the one driver.
func (c *epCall) hooks() *funcHooks {
	h := &funcHooks{
		authenticate: c.keyAuth(keyFor(c.ep.dialect)),
		offer:        c.offerToHost,
		read:         c.readAndValidate,
		estimate:     c.estimate,
		filter:       c.ep.capable(c.rl),
		send:         c.send,
		relay:        c.relay,
	}
	if c.ep.noChannel != nil {
		h.noChannel = func(error) error { return c.ep.noChannel(c) }
	}
	if len(c.ep.guard) > 0 {
		h.guard = c.guardRequest
	}
	return h
}

// readAndValidate reads the body and the model, and runs the endpoint's
// own checks.
func (c *epCall) readAndValidate() error {
	if err := c.read(); err != nil {
		return err
	}
	if err := c.resolveModel(); err != nil {
		return err
	}
	if c.ep.validate != nil {
		return c.ep.validate(c)
	}
	return nil
}

// send builds the upstream request the endpoint's way; by default the
// client's body, model rewritten, to the endpoint's path.
func (c *epCall) send(ctx context.Context, _ upstream.Adapter, t upstream.Target, ch *routing.Channel) (*http.Request, func(), error) {
	send := c.ep.send
	if send == nil {
		send = sendOpenAI
	}
	return send(c, ctx, ch, t)
}

// relay answers the client the endpoint's way; by default the body as it
// is.
func (c *epCall) relay(_ upstream.Adapter, _ upstream.Target, ch *routing.Channel, resp *http.Response) error {
	relay := c.ep.relay
	if relay == nil {
		relay = relayPassthrough
	}
	return relay(c, ch, resp)
}

// read takes the body once, within the size limit: JSON (a JSON object is
// required) or, where the endpoint allows it, a multipart form.
func (c *epCall) read() error {
	if boundary, ok := isMultipart(c.r); ok && c.ep.form {
		body := http.MaxBytesReader(c.w, c.r.Body, c.rl.Options.BodyLimit)
		f, err := parseForm(body, boundary, c.rl.multipartMemory())
		if err != nil {
			return err
		}
		c.in.form = f
		return nil
	}
	if c.ep.formOnly {
		return ir.BadRequest("invalid_content_type", "this endpoint takes a multipart/form-data body")
	}
	raw, e := readLimited(c.w, c.r, c.rl.Options.BodyLimit)
	if e != nil {
		return e
	}
	if err := jsonObject(raw); err != nil {
		return err
	}
	c.in.raw = raw
	c.stream = gjson.GetBytes(raw, "stream").Bool()
	return nil
}

func (c *epCall) resolveModel() error {
	switch {
	case c.pathModel != "":
		c.model = c.pathModel
	case c.in.str("model") != "":
		c.model = c.in.str("model")
	case c.ep.defaultModel != nil:
		c.model = c.ep.defaultModel(c.rl)
	}
	if c.model == "" {
		return missingParam("model")
	}
	return nil
}

// estimate is the endpoint's reservation for the call's price.
func (c *epCall) estimate(*billing.Price, bool) charge { return c.ep.estimate(c) }

func missingParam(name string) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "missing_required_parameter", Param: name,
		Message: "you must provide a " + name + " parameter"}
}

// maxTokenCount bounds a token count a client asks for (max_tokens and its
// kin): the largest any provider's API accepts, and far inside exact price
// arithmetic.
const maxTokenCount = math.MaxInt32

// tokenLimit reads an optional token-count field of a JSON body: absent or
// null is 0, anything else must be an integer from 1 to maxTokenCount.
func tokenLimit(raw []byte, name string) (int, error) {
	v := gjson.GetBytes(raw, name)
	if !v.Exists() || v.Type == gjson.Null {
		return 0, nil
	}
	f := v.Float()
	if v.Type != gjson.Number || f != math.Trunc(f) || f < 1 || f > maxTokenCount {
		return 0, invalidParam(name, "must be an integer from 1 to "+strconv.Itoa(maxTokenCount))
	}
	return int(f), nil
}

func invalidParam(name, why string) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_value", Param: name,
		Message: name + " " + why}
}

// moderationDefault is the model used when a moderation call names none.
func (rl *Relay) moderationDefault() string {
	if rl.Options.ModerationDefaultModel != "" {
		return rl.Options.ModerationDefaultModel
	}
	return "omni-moderation-latest"
}

// multipartMemory is how many bytes of uploaded files a request may hold in
// memory before the rest is spooled to temp files.
func (rl *Relay) multipartMemory() int64 {
	if rl.Options.MultipartMemory > 0 {
		return rl.Options.MultipartMemory
	}
	return 8 << 20
}

// capable is the endpoint's channel filter for rl.
func (ep *endpoint) capable(rl *Relay) func(*routing.Channel) bool {
	if ep.filter != nil {
		return func(ch *routing.Channel) bool { return ep.filter(rl, ch) }
	}
	return func(ch *routing.Channel) bool { return rl.servesPath(ch, ep.path) }
}

// jsonObject is the check of a JSON body an endpoint reads itself: one
// object, each member named once (CONTRACT §13), read in one pass.
func jsonObject(raw []byte) error {
	valid, dup := protocol.CheckMembers(raw)
	if !valid || !gjson.ParseBytes(raw).IsObject() {
		return ir.BadRequest("invalid_body", "the request body must be a JSON object")
	}
	if dup != nil {
		return dup
	}
	return nil
}
