package billing

import (
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// sorted is one drain step's decision: the batch to store now, the items
// to park once it is stored, and the parked keys the batch writes.
type sorted struct {
	batch    []store.BillingItem
	parked   map[string]parkedItem
	unparked []string
}

// sort decides, for the next n queued items (w.mu held), which are stored
// now and which opening items are parked. A parked item joins the batch
// of the item that ends its hold, or, once older than the pair window or
// when forced, any batch. The queue keeps its items until the batch is
// stored, so a write cut short by shutdown leaves every item where giveUp
// finds it.
func (w *Writer) sort(queue []store.BillingItem, forced bool, now time.Time) sorted {
	var p sorted
	if w.pairWindow <= 0 && len(w.parked) == 0 {
		p.batch = queue
		return p
	}
	due := func(pi parkedItem) bool { return forced || now.Sub(pi.at) >= w.pairWindow }
	p.batch = make([]store.BillingItem, 0, len(queue))
	for k, pi := range w.parked {
		if due(pi) {
			p.batch = append(p.batch, pi.it)
			p.unparked = append(p.unparked, k)
		}
	}
	park := !forced && w.pairWindow > 0
	for i, it := range queue {
		if park && opensHold(it) && w.mayPark(p, it.Open.Key) {
			if p.parked == nil {
				p.parked = map[string]parkedItem{}
			}
			p.parked[it.Open.Key] = parkedItem{it: it, seq: w.written + uint64(i) + 1, at: now}
			continue
		}
		if key := endsHold(it); key != "" {
			p.pull(w.parked, key, due)
		}
		p.batch = append(p.batch, it)
	}
	return p
}

// mayPark bounds the parked items (one per call in flight, unless far
// more calls are open than the queue takes) and parks one item per hold.
func (w *Writer) mayPark(p sorted, key string) bool {
	if len(w.parked)+len(p.parked) >= w.highWater {
		return false
	}
	_, dup := w.parked[key]
	_, dupNow := p.parked[key]
	return !dup && !dupNow
}

// pull moves the parked item that opened key's hold into the batch, just
// before the item that ends it: parked by this step, or earlier and not
// already taken because it was due.
func (p *sorted) pull(parked map[string]parkedItem, key string, due func(parkedItem) bool) {
	if pi, ok := p.parked[key]; ok {
		delete(p.parked, key)
		p.batch = append(p.batch, pi.it)
		return
	}
	pi, ok := parked[key]
	if !ok || due(pi) {
		return // stored before, or in this batch already as due
	}
	p.unparked = append(p.unparked, key)
	p.batch = append(p.batch, pi.it)
}

// opensHold is an item that only opens a hold: a reserve.
func opensHold(it store.BillingItem) bool {
	return it.Open != nil && it.Close == "" && it.Keep == ""
}

// endsHold is the key of the hold an item ends or hands over.
func endsHold(it store.BillingItem) string {
	if it.Close != "" {
		return it.Close
	}
	return it.Keep
}
