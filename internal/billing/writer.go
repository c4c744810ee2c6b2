package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Writer writes billing items (a ledger entry, its usage row and its hold
// change, as one unit) behind the request path, in batches: one
// transaction per batch instead of one per request.
//
// It never blocks a caller: the queue is a slice, not a channel. Its size
// is bounded by admissions instead: above the high-water mark Reserve
// refuses new calls (see Overloaded), while the items of calls already
// admitted are always taken, so no row is ever dropped. A failed batch is
// retried with capped backoff for as long as the process runs; Close
// gives up at its deadline and reports what stayed unwritten.
type Writer struct {
	st        store.Store
	log       *slog.Logger
	every     time.Duration
	maxSize   int
	highWater int
	backoff   [2]time.Duration // first and largest pause between retries

	mu      sync.Mutex
	queue   []store.BillingItem
	queued  uint64 // items ever queued
	written uint64 // items ever taken off the queue by a stored batch
	waiters []flushWaiter
	failing bool // the last batch failed: the database is away
	idle    bool // the loop waits for an item without ticking (waitIdle)
	stopped bool // the loop has ended; nothing queued now would be written

	conflicts atomic.Uint64 // idempotency keys found taken; see checkConflicts

	wake      chan struct{}
	closing   chan struct{}
	abort     chan struct{}
	stop      context.Context // ends with abort, to cut a write in progress
	cancel    context.CancelFunc
	done      chan struct{}
	once      sync.Once
	abortOnce sync.Once
	result    error

	onWritten   func([]store.BillingItem, []bool) // after each stored batch, with which items it took; see Journal
	lastWritten time.Time                         // when a batch was last stored or none waited; see Overloaded

	// Parking (see SetPairWindow): items that open a hold wait here, by
	// hold key, for the item that ends it. Guarded by mu; only the loop
	// changes it.
	pairWindow time.Duration
	parked     map[string]parkedItem
}

// parkedItem is an item that opens a hold, taken off the queue but not
// stored yet; seq is its place in the order items were queued.
type parkedItem struct {
	it  store.BillingItem
	seq uint64
	at  time.Time
}

// setOnWritten sets what runs after each batch is stored (before flush
// waiters are released). It is meant to be called before the writer is used.
func (w *Writer) setOnWritten(f func([]store.BillingItem, []bool)) {
	w.mu.Lock()
	w.onWritten = f
	w.mu.Unlock()
}

type flushWaiter struct {
	seq uint64
	ch  chan struct{}
}

// DefaultHighWater is the queue length above which new calls are refused
// while the writer is behind (see Overloaded).
const DefaultHighWater = 8192

// NewWriter starts a writer that flushes every interval or maxSize items.
func NewWriter(st store.Store, log *slog.Logger, every time.Duration, maxSize int) *Writer {
	w := &Writer{st: st, log: log, every: every, maxSize: maxSize, highWater: DefaultHighWater,
		backoff: [2]time.Duration{50 * time.Millisecond, 5 * time.Second}, lastWritten: time.Now(),
		wake: make(chan struct{}, 1), closing: make(chan struct{}), abort: make(chan struct{}), done: make(chan struct{})}
	w.stop, w.cancel = context.WithCancel(context.Background())
	go w.loop()
	return w
}

// SetHighWater sets the queue length above which Overloaded reports true.
// It is meant to be called before the writer is used.
func (w *Writer) SetHighWater(n int) { w.mu.Lock(); w.highWater = n; w.mu.Unlock() }

// SetPairWindow lets an item that opens a hold (a call's reserve) wait up
// to d for the item that ends the hold, so that the two are stored as one
// ledger entry and the hold never gets a row of its own (see
// store.BatchWriter): a call that ends within d costs the database about
// half of what a reserve and an end stored apart do, which most calls
// did, since they last longer than one batch. Nothing is lost by waiting:
// a process that dies before storing a reserve never stored its end either,
// so the database never took the money and has nothing to give back, and
// the live balances are rebuilt from the database or, with Redis, undone
// by the dead node's journal. A Flush stores every waiting item first, so
// whoever needs the database to hold everything (a hold handed over or
// ended synchronously, a rebuild of the live balances, shutdown) gets it.
// Zero (the default) stores every item in the next batch. It is meant to
// be called before the writer is used.
func (w *Writer) SetPairWindow(d time.Duration) {
	w.mu.Lock()
	w.pairWindow = d
	w.mu.Unlock()
}

// setBackoff sets the retry pauses (tests).
func (w *Writer) setBackoff(first, max time.Duration) {
	w.mu.Lock()
	w.backoff = [2]time.Duration{first, max}
	w.mu.Unlock()
}

// Item queues one billing item. It never blocks.
func (w *Writer) Item(it store.BillingItem) {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		// Only a caller that outlived shutdown gets here; say what is lost.
		w.log.Error("billing item queued after the writer stopped", "item", describe(it))
		return
	}
	w.queue = append(w.queue, it)
	w.queued++
	full := len(w.queue) >= w.maxSize
	idle := w.wokenBy()
	w.mu.Unlock()
	if full || idle {
		w.poke()
	}
}

// Ledger queues a ledger entry that has no usage row.
func (w *Writer) Ledger(e store.LedgerEntry) { w.Item(store.BillingItem{Entry: &e}) }

// Log queues a usage row that moves no quota.
func (w *Writer) Log(l store.UsageLog) { w.Item(store.BillingItem{Log: &l}) }

// Backlog is the number of queued items not yet stored, parked ones too.
func (w *Writer) Backlog() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) + len(w.parked)
}

// Overloaded reports whether the queue is above the high-water mark, so
// new calls must be refused until it drains. The calls already admitted
// still fit: the mark bounds admissions, not the queue. Parked items do
// not count: there is one per call in flight, not a backlog.
func (w *Writer) Overloaded() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.queue)
	if n < w.highWater {
		return false
	}
	// A burst (thousands of streams opened at once) passes the mark while
	// the database takes batch after batch; refusing it would turn a
	// healthy spike into 503s. The queue is backlog only when the writer is
	// failing or has stored nothing for a while, and never past a ceiling
	// that bounds its memory.
	behind := w.failing || time.Since(w.lastWritten) > writerBehindAfter
	return behind || n >= burstCeiling*w.highWater
}

// writerBehindAfter is how long without a stored batch, with the queue
// above its high-water mark, makes the writer count as behind.
const writerBehindAfter = time.Second

// burstCeiling × the high-water mark is the most a queue may hold while
// the writer keeps up.
const burstCeiling = 8

func (w *Writer) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Flush waits until everything queued before it is stored.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	if w.written >= w.queued && len(w.parked) == 0 {
		w.mu.Unlock()
		return nil
	}
	fw := flushWaiter{seq: w.queued, ch: make(chan struct{})}
	w.waiters = append(w.waiters, fw)
	w.mu.Unlock()
	w.poke()
	select {
	case <-fw.ch:
		return nil
	case <-w.done:
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.written >= fw.seq {
			return nil
		}
		return fmt.Errorf("billing: writer closed before the flush completed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stores what is queued and stops the writer. When ctx ends first it
// stops retrying, logs every unwritten item and returns an error counting
// them: the process is going away and cannot wait for the database.
func (w *Writer) Close(ctx context.Context) error {
	w.once.Do(func() { close(w.closing) })
	w.poke()
	select {
	case <-w.done:
	case <-ctx.Done():
		w.abortOnce.Do(func() { close(w.abort) })
		w.cancel()
		<-w.done
	}
	w.cancel()
	return w.result
}

func (w *Writer) loop() {
	defer close(w.done)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	closing := false
	for {
		select {
		case <-w.closing:
			closing = true
		case <-w.wake:
		case <-tick.C:
		}
		if !w.drain(closing) {
			w.result = w.giveUp()
			return
		}
		if closing {
			return
		}
		if w.goIdle() {
			w.waitIdle(tick)
		}
	}
}

// drain stores what was queued when it began, and goes on past that only
// while a full batch is waiting; false means Close's deadline passed first.
// Under steady load items arrive while a batch is being written, and
// chasing them would turn the writer into a stream of tiny batches, each
// paying a transaction, its statements and its WAL frames for a few rows
// (seven times the batches, and a third of the process's CPU, at 3,000
// calls a second). The last drain empties the queue and marks the writer
// stopped under the same lock that saw it empty, so no item can slip in
// unnoticed.
//
// Items that open a hold may be parked instead of written (see
// SetPairWindow); while a Flush waits, and in the last drain, every parked
// item is written and none is parked.
func (w *Writer) drain(last bool) bool {
	w.mu.Lock()
	target := w.queued
	w.mu.Unlock()
	forced := last
	for {
		w.mu.Lock()
		forced = forced || len(w.waiters) > 0
		n := min(len(w.queue), w.maxSize)
		if w.written >= target && n < w.maxSize && !last {
			n = 0 // caught up: what arrived meanwhile waits for the next tick
		}
		p := w.sort(w.queue[:n:n], forced, time.Now())
		if n == 0 && len(p.batch) == 0 {
			w.lastWritten = time.Now() // caught up: an idle writer is not behind
			w.stopped = last
			w.mu.Unlock()
			return true
		}
		w.mu.Unlock()
		if len(p.batch) > 0 && !w.writeBatch(p.batch) {
			return false
		}
		w.mu.Lock()
		clear(w.queue[:n]) // let the written items be collected
		w.queue = w.queue[n:]
		w.written += uint64(n)
		for _, k := range p.unparked {
			delete(w.parked, k)
		}
		if len(p.parked) > 0 && w.parked == nil {
			w.parked = map[string]parkedItem{}
		}
		for k, pi := range p.parked {
			w.parked[k] = pi
		}
		w.release()
		w.mu.Unlock()
	}
}

// release wakes the flushes whose items are all stored; w.mu is held. An
// item parked before a flush's place holds it back until it is written.
func (w *Writer) release() {
	if len(w.waiters) == 0 {
		return
	}
	oldest := uint64(math.MaxUint64)
	for _, pi := range w.parked {
		oldest = min(oldest, pi.seq)
	}
	kept := w.waiters[:0]
	for _, fw := range w.waiters {
		if fw.seq <= w.written && fw.seq < oldest {
			close(fw.ch)
		} else {
			kept = append(kept, fw)
		}
	}
	w.waiters = kept
}

// writeBatch retries until the database takes the batch, pausing longer
// after each failure up to a cap, or until Close's deadline.
func (w *Writer) writeBatch(batch []store.BillingItem) bool {
	w.mu.Lock()
	pause, ceiling := w.backoff[0], w.backoff[1]
	w.mu.Unlock()
	for attempt := 1; ; attempt++ {
		written, err := w.tryWrite(batch)
		if err == nil && attempt == 1 {
			w.checkConflicts(batch, written)
		}
		w.mu.Lock()
		recovered := err == nil && w.failing
		w.failing = err != nil
		w.mu.Unlock()
		if err == nil {
			w.mu.Lock()
			w.lastWritten = time.Now()
			w.mu.Unlock()
			if recovered {
				w.log.Info("billing database is back; writing the backlog", "backlog", w.Backlog())
			}
			w.mu.Lock()
			f := w.onWritten
			w.mu.Unlock()
			if f != nil {
				f(batch, written)
			}
			return true
		}
		w.log.Error("billing batch write failed; retrying", "attempt", attempt, "items", len(batch), "backlog", w.Backlog(), "err", err)
		select {
		case <-w.abort:
			return false
		case <-time.After(pause):
		}
		pause = min(pause*2, ceiling)
	}
}

// tryWrite stores one batch in one transaction. A store without
// store.BatchWriter gets the ledger first and the logs after, because the
// ledger's idempotency keys make a retry after a failure in the logs
// harmless; it keeps no holds.
func (w *Writer) tryWrite(batch []store.BillingItem) ([]bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := context.AfterFunc(w.stop, cancel)
	defer stop()
	if bw, ok := w.st.(store.BatchWriter); ok {
		return bw.WriteItems(ctx, batch)
	}
	var entries []store.LedgerEntry
	var logs []store.UsageLog
	for _, it := range batch {
		if it.Entry != nil {
			entries = append(entries, *it.Entry)
		}
		if it.Log != nil {
			logs = append(logs, *it.Log)
		}
	}
	if len(entries) > 0 {
		if err := w.st.Ledger().Apply(ctx, entries); err != nil {
			return nil, err
		}
	}
	if len(logs) > 0 {
		return nil, w.st.Logs().Insert(ctx, logs)
	}
	return nil, nil
}

// Conflicts is the number of idempotency key conflicts seen (see
// checkConflicts), for turnpike_idempotency_conflicts_total.
func (w *Writer) Conflicts() uint64 { return w.conflicts.Load() }

// giveUp logs every item left unwritten at Close's deadline, so an operator
// can replay them, and returns an error counting them.
func (w *Writer) giveUp() error {
	w.mu.Lock()
	left := w.queue
	for _, pi := range w.parked {
		left = append(left, pi.it)
	}
	w.queue, w.parked = nil, nil
	w.mu.Unlock()
	entries, rows := 0, 0
	for _, it := range left {
		if it.Entry != nil {
			entries++
		}
		if it.Log != nil {
			rows++
		}
		w.log.Error("billing item not written before shutdown", "item", describe(it))
	}
	if len(left) == 0 {
		return nil
	}
	err := fmt.Errorf("billing: %d ledger entries and %d usage rows were not written before the shutdown deadline (%d items, each logged)",
		entries, rows, len(left))
	w.log.Error(err.Error())
	return err
}

// describe renders an item for the log, completely enough to replay it.
func describe(it store.BillingItem) string {
	b, _ := json.Marshal(it)
	return string(b)
}
