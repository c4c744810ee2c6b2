package billing

import "time"

// With no traffic the writer would still wake every interval to find an
// empty queue (ten times a second by default), the most frequent of an
// idle gateway's wakeups. Instead, once nothing waits to be written it
// stops its ticker until the next item, which pokes it. That item's batch
// then waits one interval, as it would have on the running ticker.

// goIdle marks the writer idle if nothing waits to be written: no queued
// or parked item, no Flush waiting. Marked under the lock Item takes, so
// the next item always sees the mark and wakes the loop.
func (w *Writer) goIdle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) > 0 || len(w.parked) > 0 || len(w.waiters) > 0 || w.failing {
		return false
	}
	w.idle = true
	return true
}

// waitIdle stops the ticker until an item or Close wakes the loop, then
// starts it again for the next batch.
func (w *Writer) waitIdle(tick *time.Ticker) {
	tick.Stop()
	select {
	case <-w.closing:
	case <-w.wake:
	}
	w.mu.Lock()
	w.idle = false
	w.mu.Unlock()
	tick.Reset(w.every)
}

// wokenBy is Item's side of goIdle, with w.mu held: it reports whether
// the loop waits for this item. An idle writer stored nothing because
// there was nothing to store, so it is not behind (see Overloaded): the
// time without a batch is counted from this item on.
func (w *Writer) wokenBy() bool {
	if !w.idle {
		return false
	}
	w.idle = false
	w.lastWritten = time.Now()
	return true
}
