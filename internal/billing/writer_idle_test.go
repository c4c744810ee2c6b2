package billing

import (
	"context"
	"testing"
	"time"
)

// waitUntilIdle waits, within a bound, until w's loop has stopped its ticker
// for want of items.
func waitUntilIdle(t *testing.T, w *Writer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.mu.Lock()
		idle := w.idle
		w.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer never went idle with nothing queued")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAnIdleWriterStoresTheNextItemItIsWokenBy(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1_000_000, -1)
	fs := &flakyStore{Store: st}
	w := NewWriter(fs, quietLog(), time.Millisecond, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	settleItem(w, userID, tokenID, 1)
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntilIdle(t, w)
	before := fs.callCount()
	settleItem(w, userID, tokenID, 2) // no Flush: the item alone must wake the loop
	for deadline := time.Now().Add(20 * time.Second); fs.callCount() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an item queued to an idle writer was never written")
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if q, _, rows := books(t, st, userID); rows != 2 || q != 1_000_000-20 {
		t.Errorf("quota %d rows %d, want both calls stored once", q, rows)
	}
}

func TestTheFirstItemAfterAnIdleHourIsNotTakenForABacklog(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1_000_000, -1)
	gate := &gatedStore{Store: st, release: make(chan struct{})}
	w := NewWriter(gate, quietLog(), time.Millisecond, 64)
	w.SetHighWater(1)
	waitUntilIdle(t, w)
	w.mu.Lock()
	w.lastWritten = time.Now().Add(-time.Hour) // nothing to store for an hour
	w.mu.Unlock()
	settleItem(w, userID, tokenID, 1) // at the mark, its batch held by the gate
	if w.Overloaded() {
		t.Fatal("the first call after an idle hour was refused as if the writer were behind")
	}
	close(gate.release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, rows := books(t, st, userID); rows != 1 {
		t.Errorf("rows %d, want the call stored", rows)
	}
}
