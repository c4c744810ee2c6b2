package routing

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// transition changes the key's record to what change makes of it (nil:
// nothing to do) and shares it. When another node changed the record
// first, change is asked again about that node's record, once: if the
// other node already made the same transition there is nothing left to do.
func (h *Health) transition(ch *Channel, key int, change func(cur *store.ChannelHealth, now time.Time) *store.ChannelHealth) {
	k := HealthKey{ch.ID, key}
	en := h.get(k)
	en.mu.Lock()
	defer en.mu.Unlock()
	for try := 0; try < 2; try++ {
		cur := en.rec.Load()
		now := h.now().UTC().Truncate(time.Millisecond)
		nxt := change(cur, now)
		if nxt == nil {
			return
		}
		nxt.ChannelID, nxt.KeyIndex = ch.ID, key
		var version int64
		if cur != nil {
			version = cur.Version
		}
		nxt.Version = version + 1
		if h.store != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			ok, err := h.store.Swap(ctx, *nxt, version)
			if err == nil && !ok {
				h.refresh(ctx, en, k)
				cancel()
				continue
			}
			cancel()
			if err != nil {
				// Keep routing right on this node; the next Sync realigns it.
				h.log.Warn("channel health could not be shared", "channel_id", ch.ID, "err", err)
			}
		}
		en.rec.Store(nxt)
		en.changed.Store(monotonic())
		h.notify(ch, cur, nxt)
		return
	}
}

// refresh reloads one key after losing a race for it.
func (h *Health) refresh(ctx context.Context, en *entry, k HealthKey) {
	recs, err := h.store.All(ctx)
	if err != nil {
		return
	}
	for i := range recs {
		if recs[i].ChannelID == k.ChannelID && recs[i].KeyIndex == k.KeyIndex {
			en.rec.Store(&recs[i])
			return
		}
	}
	en.rec.Store(nil)
}

func (h *Health) notify(ch *Channel, cur, nxt *store.ChannelHealth) {
	was := StateHealthy
	if cur != nil {
		was = cur.State
	}
	if was == nxt.State {
		return
	}
	h.log.Info("channel health changed", "channel_id", ch.ID, "channel", ch.Name, "key_index", nxt.KeyIndex,
		"from", was, "to", nxt.State, "reason", nxt.Reason)
	if f := h.onChange.Load(); f != nil && *f != nil {
		(*f)(HealthEvent{ChannelID: ch.ID, ChannelName: ch.Name, KeyIndex: nxt.KeyIndex, State: nxt.State,
			Reason: nxt.Reason, Up: nxt.State == StateHealthy, At: nxt.Since})
	}
}

// Reset makes every key of a channel healthy at once, on every node: an
// administrator enabled the channel or gave it a new key. It reports
// channel_up for each key that was not healthy.
func (h *Health) Reset(ctx context.Context, id int64) error {
	const reason = "reset by an administrator"
	now := h.now().UTC().Truncate(time.Millisecond)
	var recs []store.ChannelHealth
	if h.store != nil {
		if err := h.store.Reset(ctx, id, reason, now); err != nil {
			return err
		}
		var err error
		if recs, err = h.store.All(ctx); err != nil {
			return err
		}
	}
	ch := h.channel(id)
	h.m.Range(func(k, v any) bool {
		key := k.(HealthKey)
		if key.ChannelID != id {
			return true
		}
		en := v.(*entry)
		en.mu.Lock()
		var fresh *store.ChannelHealth
		for i := range recs {
			if recs[i].ChannelID == id && recs[i].KeyIndex == key.KeyIndex {
				fresh = &recs[i]
			}
		}
		cur := en.rec.Swap(fresh)
		en.failures.Store(0)
		en.changed.Store(monotonic())
		en.mu.Unlock()
		if cur != nil {
			h.notify(ch, cur, &store.ChannelHealth{ChannelID: id, KeyIndex: key.KeyIndex, State: StateHealthy, Reason: reason, Since: now})
		}
		return true
	})
	return nil
}

// ResetKey makes one key of a channel healthy on every node: an
// administrator re-enabled it (PATCH key_states) or changed the key at its
// position. It reports channel_up when the key was not healthy. The record
// is written even over a healthy one, so a state another node set and
// this one has not read yet is replaced too.
func (h *Health) ResetKey(id int64, key int, reason string) {
	h.transition(h.channel(id), key, func(cur *store.ChannelHealth, now time.Time) *store.ChannelHealth {
		if cur == nil && h.store == nil {
			return nil
		}
		return &store.ChannelHealth{State: StateHealthy, Reason: reason, Since: now}
	})
	h.get(HealthKey{id, key}).failures.Store(0)
}

// Forget drops every record of a deleted channel, reporting nothing.
func (h *Health) Forget(ctx context.Context, id int64) error {
	if h.store != nil {
		if err := h.store.Delete(ctx, id); err != nil {
			return err
		}
	}
	h.m.Range(func(k, _ any) bool {
		if k.(HealthKey).ChannelID == id {
			h.m.Delete(k)
		}
		return true
	})
	return nil
}

// Sync brings in the records other nodes wrote; a record gone from the
// store (a deleted channel) is dropped here too. A key this node changed
// after the read began keeps its own, newer record.
func (h *Health) Sync(ctx context.Context) error {
	if h.store == nil {
		return nil
	}
	began := monotonic()
	recs, err := h.store.All(ctx)
	if err != nil {
		return err
	}
	seen := make(map[HealthKey]bool, len(recs))
	for i := range recs {
		k := HealthKey{recs[i].ChannelID, recs[i].KeyIndex}
		seen[k] = true
		en := h.get(k)
		if cur := en.rec.Load(); cur == nil || *cur != recs[i] {
			h.adopt(en, &recs[i], began)
		}
	}
	h.m.Range(func(k, v any) bool {
		if en := v.(*entry); !seen[k.(HealthKey)] && en.rec.Load() != nil {
			h.adopt(en, nil, began)
		}
		return true
	})
	return nil
}

func (h *Health) adopt(en *entry, rec *store.ChannelHealth, readBegan int64) {
	en.mu.Lock()
	defer en.mu.Unlock()
	if en.changed.Load() < readBegan {
		en.rec.Store(rec)
	}
}
