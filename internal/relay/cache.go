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
	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// CacheHeader tells the client how the response cache treated its call
// (CONTRACT §22): hit, miss or bypass. A call whose model and key have no
// cache gets none.
const CacheHeader = "X-Turnpike-Cache"

// errCacheHit ends a call the response cache answered: it was billed and
// recorded, so there is nothing to fail.
var errCacheHit = errors.New("relay: answered from the response cache")

// cacheSurface is what the response cache needs of a surface: the key of
// its request and how a kept answer is replayed in the client's dialect.
// The chat call (every chat format) and the Responses call are the
// surfaces; everything else about the cache is theirs in common.
type cacheSurface interface {
	// cacheKey is the key of the call's request in group; ok is false for
	// a request the cache passes by (its answer depends on more than its
	// body).
	cacheKey(group string) (key respcache.Key, ok bool)
	// encodeCached renders a kept answer as the dialect's JSON answer.
	encodeCached(res *ir.Response) ([]byte, error)
	// streamCached writes a kept answer as the dialect's stream.
	streamCached(res *ir.Response)
	// body is the client's request as checked, for content logging.
	body() []byte
}

// responseCache is a call's standing with the response cache: on when its
// key or model has one, the entry's key, and whether the answer it gets
// from an upstream may be kept.
type responseCache struct {
	core    *callCore
	surface cacheSurface
	on      bool
	keep    bool
	key     respcache.Key
	pol     respcache.Policy
	// rec builds the answer of a stream as it is relayed; answer is the
	// complete answer to keep (nil: nothing to keep).
	rec    *answerRecorder
	answer *ir.Response
}

// cachePolicy is the response cache that applies to the call: the key's,
// else its model's; ok is false when neither has one.
func (c *callCore) cachePolicy() (respcache.Policy, bool) {
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

// lookup answers the call from the response cache when it can, before
// anything is routed or reserved; it reports whether it did. A call the
// cache does not apply to costs one price lookup and nothing more.
func (rc *responseCache) lookup() (bool, error) {
	c := rc.core
	if c.rl.Cache == nil {
		return false, nil
	}
	pol, ok := c.cachePolicy()
	if !ok {
		return false, nil
	}
	key, ok := rc.surface.cacheKey(c.principal.Group)
	if !ok {
		c.w.Header().Set(CacheHeader, "bypass")
		return false, nil
	}
	rc.on, rc.keep, rc.key, rc.pol = true, true, key, pol
	noCache, noStore := cacheDirectives(c.r.Header)
	if noCache || noStore {
		rc.keep = !noStore
		c.w.Header().Set(CacheHeader, "bypass")
		return false, nil
	}
	e, hit, err := c.rl.Cache.Lookup(c.r.Context(), key)
	if err != nil {
		c.rl.Logger.WarnContext(c.r.Context(), "response cache unavailable; asking the upstream", "err", err)
	}
	var res ir.Response
	if hit && json.Unmarshal(e.Answer, &res) == nil {
		return true, rc.serveHit(e, &res)
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
func (rc *responseCache) serveHit(e respcache.Entry, res *ir.Response) error {
	c := rc.core
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
	amount := rc.pol.HitCharge(e)
	if err := c.reserve(amount); err != nil {
		return err
	}
	surfaceOther := c.rowOther
	c.rowOther = func(o *logOther) {
		if surfaceOther != nil {
			surfaceOther(o)
		}
		o.UpstreamCostUSD = "0"
	}
	c.w.Header().Set(CacheHeader, "hit")
	res.Model = c.model
	c.contentHit(rc.surface.body(), res)
	if c.stream {
		rc.surface.streamCached(res)
	} else if err := rc.replayJSON(res); err != nil {
		c.refund(nil)
		return err
	}
	c.settleAt(charge{usage: u, detail: map[string]any{"response_cache": "hit"}}, amount)
	return errCacheHit
}

// replayJSON writes a cached answer as the client dialect's JSON answer.
func (rc *responseCache) replayJSON(res *ir.Response) error {
	out, err := rc.surface.encodeCached(res)
	if err != nil {
		return err
	}
	c := rc.core
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(out)
	return nil
}

// recorder is the recorder of a streamed answer the call may keep, nil
// when it may keep none: only calls that may fill the cache pay for one.
func (rc *responseCache) recorder() *answerRecorder {
	if !rc.keep || !rc.core.stream {
		return nil
	}
	rc.rec, rc.answer = &answerRecorder{limit: rc.pol.MaxEntryBytes}, nil
	return rc.rec
}

// note takes a complete answer to keep once the call is settled; nil or a
// call that may keep nothing notes nothing.
func (rc *responseCache) note(res *ir.Response) {
	if rc.keep && res != nil {
		rc.answer, rc.rec = res, nil
	}
}

// store keeps the call's answer, billed at usage, when it is complete and
// successful: never a stream that broke, a client that left, an answer a
// guardrail acted on or one that stopped on an error. It is stored off the
// request's path; the entry's charge is what this call was billed.
func (rc *responseCache) store(usage ir.Usage) {
	if !rc.keep {
		return
	}
	c, res := rc.core, rc.answer
	if rc.rec != nil {
		res = rc.rec.response()
	}
	if res == nil || len(c.guards) > 0 || !cacheable(res) {
		return
	}
	res.Usage = usage
	amount, err := c.quota(charge{usage: usage, usd: c.price.OneCallCost()})
	if err != nil {
		return
	}
	answer, err := json.Marshal(res)
	if err != nil {
		return
	}
	cache, key, pol, log := c.rl.Cache, rc.key, rc.pol, c.rl.Logger
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
