package relay

import (
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/routing"
)

// The Responses call's side of the response cache (cache.go): which
// requests it keys, replay as a Response object or its event stream, and
// keeping answers both from channels that speak the Responses API and from
// chat channels.

// responsesKeySpace keeps Responses bodies apart from chat ones.
const responsesKeySpace = "responses"

// lookupCache is the Responses call's cache stage. A request a guardrail
// rewrote is neither answered from the cache nor kept.
func (rc *respCall) lookupCache() (bool, error) {
	if rc.redacted {
		return false, nil
	}
	return rc.cache.lookup()
}

// cacheKey keys only a request whose answer depends on its body alone and
// that leaves nothing for the client to find later: one the conversion
// took (so it names no previous response, conversation or stored prompt,
// and is not background) and that says store: false. A stored response is
// one its client may fetch or continue by id, which an answer from the
// cache never can be; such a request is passed by (X-Turnpike-Cache:
// bypass).
func (rc *respCall) cacheKey(group string) (respcache.Key, bool) {
	if rc.decErr != nil || rc.dec == nil || gjson.GetBytes(rc.in.raw, "store").Type != gjson.False {
		return "", false
	}
	key, err := respcache.KeyIn(responsesKeySpace, group, rc.model, rc.in.raw)
	return key, err == nil
}

func (rc *respCall) body() []byte { return rc.in.raw }

// encodeCached is a kept answer as a Response object of this request: new
// ids, this request's echoed fields.
func (rc *respCall) encodeCached(res *ir.Response) ([]byte, error) {
	return rc.dec.EncodeResponse(res, rc.model)
}

// streamCached is a kept answer as the whole Responses event stream, from
// response.created to response.completed.
func (rc *respCall) streamCached(res *ir.Response) {
	s := newSink(rc.w, rc.epCall, false)
	enc := rc.dec.NewStreamEncoder(s, rc.model)
	_ = responseEvents(res, enc.Encode)
	s.close()
}

// relayKeeping relays an upstream answer and, when the call may fill the
// cache and the answer came whole, keeps it.
func (rc *respCall) relayKeeping(c *epCall, ch *routing.Channel, resp *http.Response) error {
	err := rc.relay(c, ch, resp)
	if err == nil {
		rc.cache.store(rc.usage)
	}
	return err
}

// billed is the charge of tokens plus the per-call price, noting the usage
// the call is billed for: a kept entry and a failover's row use it.
func (rc *respCall) billed(u ir.Usage) charge {
	rc.usage = u
	return rc.tokensCharge(u)
}

// noteNative notes a Response object a native channel answered for the
// cache, in IR; an answer IR cannot carry whole is not kept.
func (rc *respCall) noteNative(body []byte) {
	if !rc.cache.keep || len(body) > rc.cache.pol.MaxEntryBytes {
		return
	}
	if res, err := rc.dec.DecodeResponse(body); err == nil {
		rc.cache.note(res)
	}
}

// noteNativeEvent notes the Response a native stream's terminal event
// carries whole. One that repeats no output (some compatible servers send
// it bare, the text being in the deltas alone) is not kept.
func (rc *respCall) noteNativeEvent(name string, data []byte) {
	if !rc.cache.keep || !responseEnds.StreamEnds(name, data) {
		return
	}
	if res := gjson.GetBytes(data, "response"); res.Get("output.#").Int() > 0 {
		rc.noteNative([]byte(res.Raw))
	}
}
