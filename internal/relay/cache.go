package relay

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// CacheHeader tells the client how the response cache treated its call
// (CONTRACT §22): hit, miss or bypass. A call whose model and key have no
// cache gets none.
const CacheHeader = "X-Turnpike-Cache"

// errCacheHit ends a call the response cache answered: it was billed and
// recorded, so there is nothing to fail.
var errCacheHit = errors.New("relay: answered from the response cache")

// callCache is a chat call's standing with the response cache: on when its
// key or model has one, the entry's key, and whether the answer it gets
// from an upstream may be kept.
type callCache struct {
	on   bool
	keep bool
	key  respcache.Key
	pol  respcache.Policy
	// rec builds the answer of a stream as it is relayed; answer is the
	// complete answer to keep (nil: nothing to keep).
	rec    *answerRecorder
	answer *ir.Response
}

// cachePolicy is the response cache that applies to the call: the key's,
// else its model's; ok is false when neither has one.
func (c *call) cachePolicy() (respcache.Policy, bool) {
	rc := c.principal.ResponseCache
	if rc == nil {
		price, err := c.rl.Billing.Price(c.model)
		if err != nil || price.Raw.ResponseCache == nil {
			return respcache.Policy{}, false
		}
		rc = price.Raw.ResponseCache
	}
	return policyOf(rc), true
}

func policyOf(rc *store.ResponseCache) respcache.Policy {
	return respcache.Policy{TTL: time.Duration(rc.TTLSeconds) * time.Second, HitRatio: rc.HitRatio, MaxEntryBytes: rc.MaxEntryKB << 10}
}

// lookupCache answers the call from the response cache when it can, before
// anything is routed or reserved; it reports whether it did. A call the
// cache does not apply to costs one price lookup and nothing more.
func (c *call) lookupCache() (bool, error) {
	if c.rl.Cache == nil || c.redacted {
		return false, nil
	}
	pol, ok := c.cachePolicy()
	if !ok {
		return false, nil
	}
	// The key is of the bytes that would be forwarded: the client's own
	// body, checked for duplicate members when it was decoded.
	key, err := respcache.KeyOf(c.principal.Group, c.model, c.raw)
	if err != nil {
		return false, nil
	}
	c.cache = callCache{on: true, keep: true, key: key, pol: pol}
	noCache, noStore := cacheDirectives(c.r.Header)
	if noCache || noStore {
		c.cache.keep = !noStore
		c.w.Header().Set(CacheHeader, "bypass")
		return false, nil
	}
	e, hit, err := c.rl.Cache.Lookup(c.r.Context(), key)
	if err != nil {
		c.rl.Logger.WarnContext(c.r.Context(), "response cache unavailable; asking the upstream", "err", err)
	}
	var res ir.Response
	if hit && json.Unmarshal(e.Answer, &res) == nil {
		return true, c.serveHit(e, &res)
	}
	c.w.Header().Set(CacheHeader, "miss")
	return false, nil
}

// cacheDirectives reads the request's Cache-Control: no-cache bypasses the
// lookup (the fresh answer replaces the entry), no-store bypasses the
// cache altogether.
func cacheDirectives(h http.Header) (noCache, noStore bool) {
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "no-cache":
				noCache = true
			case "no-store":
				noStore = true
			}
		}
	}
	return noCache, noStore
}

// serveHit bills a hit at its share of the original charge through the one
// admission seam (price check, limits, a ticket reserved at exactly that
// amount) and answers it in the client's dialect, as a stream when the
// client asked for one. The row has no channel and no upstream cost.
func (c *call) serveHit(e respcache.Entry, res *ir.Response) error {
	c.table = c.rl.Router.Table()
	price, err := c.rl.priceOn(c.table, c.principal, c.model)
	if err != nil {
		return err
	}
	c.price = price
	u := res.Usage
	if err := c.limit(exactly(func(*billing.Price) charge { return charge{usage: u} })); err != nil {
		return err
	}
	amount := c.cache.pol.HitCharge(e)
	if err := c.reserve(amount); err != nil {
		return err
	}
	c.usage = u
	chatOther := c.rowOther
	c.rowOther = func(o *logOther) {
		chatOther(o)
		o.UpstreamCostUSD = "0"
	}
	c.w.Header().Set(CacheHeader, "hit")
	res.Model = c.model
	if c.req.Stream {
		c.replayStream(res)
	} else if err := c.replayJSON(res); err != nil {
		c.refund(nil)
		return err
	}
	c.settleAt(charge{usage: u, detail: map[string]any{"response_cache": "hit"}}, amount)
	return errCacheHit
}

// replayJSON writes a cached answer as the client dialect's JSON answer.
func (c *call) replayJSON(res *ir.Response) error {
	out, err := c.sf.codec.EncodeResponse(res)
	if err != nil {
		return err
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(out)
	return nil
}

// replayStream writes a cached answer as the client dialect's stream.
func (c *call) replayStream(res *ir.Response) {
	s := newSink(c.w, c, c.sf.jsonArrayStream)
	enc := c.sf.codec.NewStreamEncoder(s, protocol.StreamOptions{IncludeUsage: c.req.IncludeUsage})
	_ = responseEvents(res, enc.Encode)
	s.close()
}

// relayKeeping relays an upstream answer and, when the call may fill the
// cache and the answer came whole, keeps it.
func (c *call) relayKeeping(a upstream.Adapter, t upstream.Target, ch *routing.Channel, resp *http.Response) error {
	if c.cache.keep && c.req.Stream {
		c.cache.rec = &answerRecorder{limit: c.cache.pol.MaxEntryBytes}
	}
	err := c.relay(a, t, ch, resp)
	if err == nil && c.cache.keep {
		c.keepAnswer()
	}
	return err
}

// keepRegular notes a non-streamed answer for the cache: res when it was
// converted, else the passed-through body decoded in the client's dialect.
func (c *call) keepRegular(res *ir.Response, body []byte) {
	if !c.cache.keep {
		return
	}
	if res == nil {
		var err error
		if res, err = c.sf.codec.DecodeResponse(body); err != nil {
			return
		}
	}
	c.cache.answer = res
}

// keepAnswer stores the call's answer when it is complete and successful:
// never a stream that broke, a client that left, an answer a guardrail
// acted on or one that stopped on an error. It is stored off the request's
// path; the entry's charge is what this call was billed.
func (c *call) keepAnswer() {
	res := c.cache.answer
	if c.cache.rec != nil {
		res = c.cache.rec.response()
	}
	if res == nil || len(c.guards) > 0 || !cacheable(res) {
		return
	}
	res.Usage = c.usage
	amount, err := c.quota(charge{usage: c.usage, usd: c.price.CallCost(1)})
	if err != nil {
		return
	}
	answer, err := json.Marshal(res)
	if err != nil {
		return
	}
	cache, key, pol, log := c.rl.Cache, c.cache.key, c.cache.pol, c.rl.Logger
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := cache.Keep(ctx, key, respcache.Entry{Charge: amount, Answer: answer}, pol); err != nil {
			log.Warn("response cache entry not stored", "err", err)
		}
	}()
}

// cacheable: an answer that ended as the model meant it to.
func cacheable(res *ir.Response) bool {
	switch res.StopReason {
	case ir.StopError, ir.StopContentFilter, "":
		return false
	}
	for _, p := range res.Content {
		if p.Kind == ir.PartRedactedThinking {
			return false // its opaque data has no stream event to replay it
		}
	}
	return true
}
