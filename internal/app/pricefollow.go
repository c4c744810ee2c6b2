package app

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// priceFollowEvery is how often a node checks whether prices changed. A
// price set to start shortly (effective_from a few seconds ahead) must be
// in every node's snapshot before it starts, also without Redis to
// announce the change; the check is one small query.
const priceFollowEvery = 2 * time.Second

// followPrices reloads the price snapshot whenever the prices' revision
// moves, until ctx ends. The revision is read before the reload, so a
// change made meanwhile moves it again and is loaded at the next check.
func (a *App) followPrices(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var seen store.PriceRevision
	loaded := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rev, err := a.Store.Prices().Revision(ctx)
		if err != nil {
			if ctx.Err() == nil {
				a.Log.Debug("price revision not read; the periodic refresh remains", "err", err)
			}
			continue
		}
		if loaded && rev == seen {
			continue
		}
		if err := a.Billing.Reload(ctx, a.Store); err != nil {
			if ctx.Err() == nil {
				a.Log.Warn("price snapshot not reloaded", "err", err)
			}
			continue
		}
		seen, loaded = rev, true
	}
}
