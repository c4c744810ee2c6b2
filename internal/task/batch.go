package task

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// pollBatch polls tasks of one plugin version on one channel with a single
// upstream request. A failure of the whole request counts for every task;
// a task missing from the answer counts for itself. A 404/410 of the batch
// endpoint says nothing about any one task, so it is counted too rather
// than failing them all.
func (p *Poller) pollBatch(ctx context.Context, ts []*Task) {
	pl, why := p.resolve(ctx, ts[0])
	if pl == nil {
		for _, t := range ts {
			if !p.expiredWithout(ctx, t) {
				p.count(ctx, nil, t, why)
			}
		}
		return
	}
	live := ts[:0:0]
	for _, t := range ts {
		if !p.expired(ctx, t, pl.l) {
			live = append(live, t)
		}
	}
	if len(live) == 0 {
		return
	}
	ctxs := make([]map[string]any, len(live))
	ids := make([]any, len(live))
	for i, t := range live {
		ctxs[i] = queryContext(t, pl.ch, pl.l, pl.cr)
		ids[i] = t.UpstreamID
	}
	bctx := batchContext(ctxs, pl.ch, pl.l, pl.cr)
	resp, why := p.s.query(ctx, pl, manifest.HookBuildBatchQueryRequest, bctx, ids)
	if resp != nil {
		why = p.batchAnswer(ctx, pl, live, bctx, resp)
		if why == "" {
			return
		}
	}
	for _, t := range live {
		tp := *pl
		tp.t = t
		p.count(ctx, &tp, t, why)
	}
}

// batchAnswer applies a batch answer to each task; a non-empty return is
// the reason every task's poll counts as failed.
func (p *Poller) batchAnswer(ctx context.Context, pl *polled, ts []*Task, bctx map[string]any, resp *upstreamResponse) string {
	o, parse, why := pollHTTP(resp.status)
	if !parse {
		if o == outcomeCounted && (resp.status == 401 || resp.status == 403) {
			p.s.log.Warn("batch task poll refused by the upstream; check the channel's key", "channel", pl.ch.ID, "status", resp.status)
		}
		if why == "" {
			why = "the batch query failed"
		}
		return why
	}
	v, err := call(ctx, pl.l, manifest.HookParseBatchResult, bctx, resp.body, resp.httpInfo())
	if err != nil {
		return "the plugin could not read the batch answer: " + hookMessage(err, pl.cr.secrets)
	}
	items, _ := v.([]any)
	byID := map[string]pollResult{}
	for _, it := range items {
		r := normalizeResult(it)
		if r.taskID != "" {
			byID[r.taskID] = r
		}
	}
	for _, t := range ts {
		r, ok := byID[t.UpstreamID]
		if !ok {
			p.count(ctx, pl, t, "the batch answer has no result for the task")
			continue
		}
		o, why := pollParsed(resp.status, r, nil)
		var snapshot any = rawOrNil(t.Data)
		if r.hasData {
			snapshot = p.s.sanitize(ctx, pluginCaller{pl.l}, r.data, t.PublicID)
		}
		p.apply(ctx, pl, t, o, r, snapshot, why)
	}
	return ""
}
