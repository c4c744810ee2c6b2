package relay

import (
	"context"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

func (h *funcHooks) authenticateCaller() (*auth.Principal, error) { return h.authenticate() }

func (h *funcHooks) offerToPlugin() (bool, error) {
	if h.offer == nil {
		return false, nil
	}
	return h.offer()
}

func (h *funcHooks) readRequest() error { return h.read() }

func (h *funcHooks) guardStage() error {
	if h.guard == nil {
		return nil
	}
	return h.guard()
}

func (h *funcHooks) cachedAnswer() (bool, error) {
	if h.cached == nil {
		return false, nil
	}
	return h.cached()
}

func (h *funcHooks) sizer() estimator                           { return h.estimate }
func (h *funcHooks) channelFilter() func(*routing.Channel) bool { return h.filter }

func (h *funcHooks) affinity() (routing.Session, bool) {
	if h.session == nil {
		return routing.Session{}, false
	}
	return h.session()
}

func (h *funcHooks) noChannelAnswer(err error) error {
	if h.noChannel == nil {
		return err
	}
	return h.noChannel(err)
}

func (h *funcHooks) sendAttempt(ctx context.Context, a upstream.Adapter, t upstream.Target, ch *routing.Channel) (*http.Request, func(), error) {
	return h.send(ctx, a, t, ch)
}

func (h *funcHooks) relayAnswer(a upstream.Adapter, t upstream.Target, ch *routing.Channel, resp *http.Response) error {
	return h.relay(a, t, ch, resp)
}

func (h *funcHooks) connector() func(*routing.Channel) error { return h.connect }

// chatHooks is the chat call as its own hooks. A defined type rather than
// methods of call, so that the hooks' names stay apart from the call's own
// (call.read, call.send, the core's filter field).
type chatHooks call

func (h *chatHooks) c() *call { return (*call)(h) }

// The key (or session) is checked from the headers before the body is
// read: an anonymous caller must not make the gateway take 32 MB first.
func (h *chatHooks) authenticateCaller() (*auth.Principal, error) { return h.c().authenticate() }
func (h *chatHooks) offerToPlugin() (bool, error)                 { return false, nil }
func (h *chatHooks) readRequest() error                           { return h.c().read() }
func (h *chatHooks) guardStage() error                            { return h.c().guardRequest() }
func (h *chatHooks) cachedAnswer() (bool, error)                  { return h.c().lookupCache() }

// sizer is kept by the core past admission (callCore.sizer), so it is a
// function value: the call's one method value left.
func (h *chatHooks) sizer() estimator                           { return h.c().estimate }
func (h *chatHooks) channelFilter() func(*routing.Channel) bool { return h.wire }
func (h *chatHooks) affinity() (routing.Session, bool)          { return h.c().session() }
func (h *chatHooks) noChannelAnswer(err error) error            { return err }
func (h *chatHooks) connector() func(*routing.Channel) error    { return nil }

func (h *chatHooks) sendAttempt(ctx context.Context, a upstream.Adapter, t upstream.Target, ch *routing.Channel) (*http.Request, func(), error) {
	return h.c().send(ctx, a, t, ch)
}

func (h *chatHooks) relayAnswer(a upstream.Adapter, t upstream.Target, ch *routing.Channel, resp *http.Response) error {
	return h.c().relayKeeping(a, t, ch, resp)
}
