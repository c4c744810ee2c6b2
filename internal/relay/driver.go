package relay

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// hooks are all a surface gives the one driver, as httputil.ReverseProxy
// takes a Director, a ModifyResponse and an ErrorHandler: who the caller is,
// how the request is read, what it reserves, which channels may serve it,
// how the upstream request is built and how the answer is relayed and
// billed. No surface writes its own loop over channels, its own attempt or
// its own settle.
//
// It is an interface so that a surface can be its own hooks: the chat
// call's methods reach the driver through one pointer, not as a method
// value (a closure of its own) per hook and per call. Surfaces that fill
// their hooks from parts use funcHooks.
type hooks interface {
	authenticateCaller() (*auth.Principal, error)
	offerToPlugin() (served bool, err error)
	readRequest() error
	guardStage() error
	cachedAnswer() (bool, error)
	sizer() estimator
	channelFilter() func(*routing.Channel) bool
	affinity() (key routing.Session, ok bool)
	noChannelAnswer(err error) error
	sendAttempt(ctx context.Context, a upstream.Adapter, t upstream.Target, ch *routing.Channel) (req *http.Request, done func(), err error)
	relayAnswer(a upstream.Adapter, t upstream.Target, ch *routing.Channel, resp *http.Response) error
	connector() func(*routing.Channel) error
}

// funcHooks are hooks as function fields; a nil field is the driver's
// default.
type funcHooks struct {
	// authenticate finds the caller from the request's headers, before
	// the body is read.
	authenticate func() (*auth.Principal, error)
	// offer lets a task plugin take the call over (host protocols); it
	// reports served when one answered it. Nil offers nothing.
	offer func() (served bool, err error)
	// read takes the body once, decodes and validates it, and sets the
	// call's model.
	read func() error
	// guard runs the request-stage guardrails on what read decoded,
	// before anything is reserved; nil checks nothing.
	guard func() error
	// cached answers the call from the response cache before anything is
	// routed or reserved, reporting whether it did; nil for surfaces
	// without one.
	cached   func() (bool, error)
	estimate estimator
	filter   func(*routing.Channel) bool
	// session is the call's cache affinity session (routing.SessionKey),
	// ok false when the call names none the surface can tell; nil for
	// surfaces whose calls have no prompt to cache.
	session func() (key routing.Session, ok bool)
	// noChannel replaces the answer when no channel can take the call
	// (nil keeps the core's 503).
	noChannel func(err error) error
	// send builds the upstream request for one channel's target; done,
	// when not nil, runs once the attempt is over.
	send func(ctx context.Context, a upstream.Adapter, t upstream.Target, ch *routing.Channel) (req *http.Request, done func(), err error)
	// relay answers the client from a 2xx upstream answer and settles.
	relay func(a upstream.Adapter, t upstream.Target, ch *routing.Channel, resp *http.Response) error
	// connect replaces send and relay for a surface whose attempt is not
	// an HTTP exchange (realtime dials a WebSocket).
	connect func(ch *routing.Channel) error
}

// errServed ends a call a task plugin answered: nothing to fail or record.
var errServed = errors.New("relay: served by a task plugin")

// serve is the one driver: authenticate → offer → read → admit → plan →
// attempt every planned channel under the shared retry rule; any error is
// failed (refunded once, error row, error in the surface's dialect), and
// every call is finished.
func (c *callCore) serve(h hooks) {
	err := c.drive(h)
	if errors.Is(err, errServed) {
		return
	}
	if err != nil && err != errCacheHit {
		c.fail(err)
	}
	c.finish()
}

// drive runs the stages up to the attempts; a surface that lives on after
// them (realtime) calls it directly.
func (c *callCore) drive(h hooks) error {
	if c.line != nil {
		c.principal = c.line.principal
	} else {
		p, err := h.authenticateCaller()
		if err != nil {
			return err
		}
		c.principal = p
	}
	c.beginContent(h)
	if served, err := h.offerToPlugin(); err != nil || served {
		if err == nil {
			err = errServed
		}
		return err
	}
	if err := h.readRequest(); err != nil {
		return err
	}
	if err := h.guardStage(); err != nil {
		return err
	}
	if hit, err := h.cachedAnswer(); hit || err != nil {
		return err
	}
	if err := c.admit(h.sizer()); err != nil {
		return err
	}
	c.filter = h.channelFilter()
	if key, ok := h.affinity(); ok {
		c.lookupPin(key)
	}
	plan, err := c.plan(c.filter)
	if err != nil {
		return h.noChannelAnswer(err)
	}
	attempt := h.connector()
	if attempt == nil {
		attempt = func(ch *routing.Channel) error { return c.attempt(ch, h) }
	}
	return c.attemptAll(plan, attempt)
}

// attempt is the one attempt body: build the request for the channel's
// target, exchange it under the first-byte deadline, turn a non-2xx answer
// into the provider's error (which health judges), and relay a 2xx one.
func (c *callCore) attempt(ch *routing.Channel, h hooks) error {
	a, t, err := c.rl.target(ch, c.model)
	if err != nil {
		return err
	}
	s := c.openAttempt()
	defer s.close(c)
	req, done, err := h.sendAttempt(s.ctx, a, t, ch)
	if err != nil {
		return err
	}
	if done != nil {
		defer done()
	}
	if c.content != nil {
		c.contentSent(req, ch)
	}
	resp, err := c.rl.exchange(c.r.Context(), req, ch, s.cancel)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return adapterError(a, a.Codec(t), resp)
	}
	c.rl.Router.Health.SucceededKey(ch, ch.KeyIndex)
	c.servedBy(ch)
	return h.relayAnswer(a, t, ch, resp)
}

// attemptScope is the upstream request's context of one attempt and the
// watches that end it. It is set up and closed by functions of their own,
// not by closures deferred in attempt: attempt's frame lies under the
// exchange and under the whole stream, so what it holds is paid on every
// open stream's stack.
type attemptScope struct {
	ctx    context.Context
	cancel context.CancelFunc
	// unwatch stops the client and shutdown watches.
	unwatch [2]func() bool
}

func (c *callCore) openAttempt() attemptScope {
	// bg is the request's context without its cancellation, made once at
	// begin; only a traced attempt's request (c.r carries the attempt's
	// span then) needs a context of its own.
	parent := c.bg
	if c.span != nil || parent == nil {
		parent = context.WithoutCancel(c.r.Context())
	}
	ctx, cancel := context.WithTimeout(parent, c.rl.Options.UpstreamTimeout)
	c.cancelUpstream = cancel
	// A client that leaves a stream ends the upstream call at once (the
	// stream tail does so once the answer streams); any other call is
	// awaited clientLeftGrace more, so an answer being made is billed.
	// A stream's watch is the cancel itself: no closure for it.
	onLeft := cancel
	if !c.stream {
		onLeft = func() { time.AfterFunc(clientLeftGrace, cancel) }
	}
	left := context.AfterFunc(c.r.Context(), onLeft)
	// When the shutdown grace is over the upstream read ends: the stream
	// tail then tells the client in its dialect and bills what was sent.
	stopped := context.AfterFunc(c.rl.stopped.watch(), cancel)
	return attemptScope{ctx: ctx, cancel: cancel, unwatch: [2]func() bool{left, stopped}}
}

// close undoes openAttempt in the reverse order.
func (s *attemptScope) close(c *callCore) {
	s.unwatch[1]()
	s.unwatch[0]()
	c.cancelUpstream = nil
	s.cancel()
}

// keyAuth authenticates with the API key key finds in the request.
func (c *callCore) keyAuth(key func(*http.Request) string) func() (*auth.Principal, error) {
	return func() (*auth.Principal, error) { return c.rl.Keys.Authenticate(c.r.Context(), key(c.r)) }
}
