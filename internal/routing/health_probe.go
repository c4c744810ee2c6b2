package routing

import (
	"context"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// RunProbes probes every auto-disabled key whose probe is due, each on the
// one node that wins its lease; a success makes the key healthy.
func (h *Health) RunProbes(ctx context.Context) {
	if h.Probe == nil {
		return
	}
	now := h.now()
	var wg sync.WaitGroup
	h.m.Range(func(k, v any) bool {
		key, en := k.(HealthKey), v.(*entry)
		rec := en.rec.Load()
		if rec == nil || rec.State != StateAutoDisabled || now.Before(rec.NextProbe) {
			return true
		}
		ch := h.channel(key.ChannelID)
		if ch.Status != store.StatusEnabled || !en.probing.CompareAndSwap(false, true) {
			return true
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer en.probing.Store(false)
			h.probe(ctx, ch, key, en, rec, now)
		}()
		return true
	})
	wg.Wait()
}

func (h *Health) probe(ctx context.Context, ch *Channel, key HealthKey, en *entry, rec *store.ChannelHealth, now time.Time) {
	nextAt := now.UTC().Truncate(time.Millisecond).Add(ch.Policy.ProbeInterval)
	if h.store != nil {
		ok, err := h.store.LeaseProbe(ctx, key.ChannelID, key.KeyIndex, rec.NextProbe, nextAt)
		if err != nil || !ok {
			return
		}
	}
	leased := *rec
	leased.NextProbe = nextAt
	en.rec.CompareAndSwap(rec, &leased)
	err := h.Probe(ctx, ch, key.KeyIndex)
	if err != nil {
		h.log.Info("probe of an auto-disabled channel failed", "channel_id", ch.ID, "key_index", key.KeyIndex, "err", err)
		return
	}
	h.transition(ch, key.KeyIndex, func(cur *store.ChannelHealth, now time.Time) *store.ChannelHealth {
		if cur == nil || cur.State != StateAutoDisabled {
			return nil
		}
		return &store.ChannelHealth{State: StateHealthy, Reason: "probe succeeded", Since: now}
	})
}

// Run keeps the node's view current (every interval) and probes what is
// due, until ctx ends. Probes run in their own loop so that a hanging
// upstream cannot hold the refresh up.
func (h *Health) Run(ctx context.Context, interval time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(ctx, interval, func() { h.RunProbes(ctx) })
	}()
	every(ctx, interval, func() {
		if err := h.Sync(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("channel health refresh failed", "err", err)
		}
	})
	<-done
}

func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
