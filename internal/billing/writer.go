package billing

import (
	"context"
	"log/slog"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Writer writes ledger entries and usage logs behind the request path, in
// batches: one transaction per batch instead of one per request. Nothing
// handed to it is dropped: a failed batch is retried, and Close drains.
type Writer struct {
	st      store.Store
	log     *slog.Logger
	in      chan writeItem
	done    chan struct{}
	every   time.Duration
	maxSize int
}

type writeItem struct {
	entry *store.LedgerEntry
	log   *store.UsageLog
	flush chan struct{}
}

// NewWriter starts a writer that flushes every interval or maxSize items.
func NewWriter(st store.Store, log *slog.Logger, every time.Duration, maxSize int) *Writer {
	w := &Writer{st: st, log: log, in: make(chan writeItem, 8192), done: make(chan struct{}), every: every, maxSize: maxSize}
	go w.loop()
	return w
}

// Ledger queues a ledger entry.
func (w *Writer) Ledger(e store.LedgerEntry) { w.in <- writeItem{entry: &e} }

// Log queues a usage log row.
func (w *Writer) Log(l store.UsageLog) { w.in <- writeItem{log: &l} }

// Flush waits until everything queued before it is written.
func (w *Writer) Flush(ctx context.Context) error {
	ch := make(chan struct{})
	select {
	case w.in <- writeItem{flush: ch}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close drains the queue and stops the writer.
func (w *Writer) Close() {
	close(w.in)
	<-w.done
}

func (w *Writer) loop() {
	defer close(w.done)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	var entries []store.LedgerEntry
	var logs []store.UsageLog
	var waiters []chan struct{}
	write := func() {
		w.writeBatch(entries, logs)
		entries, logs = entries[:0], logs[:0]
		for _, c := range waiters {
			close(c)
		}
		waiters = waiters[:0]
	}
	for {
		select {
		case it, ok := <-w.in:
			if !ok {
				write()
				return
			}
			switch {
			case it.entry != nil:
				entries = append(entries, *it.entry)
			case it.log != nil:
				logs = append(logs, *it.log)
			case it.flush != nil:
				waiters = append(waiters, it.flush)
				write()
				continue
			}
			if len(entries)+len(logs) >= w.maxSize {
				write()
			}
		case <-tick.C:
			if len(entries)+len(logs) > 0 {
				write()
			}
		}
	}
}

// writeBatch retries until the database takes the batch: losing a ledger
// row would break the balance invariant, so waiting is the lesser evil.
func (w *Writer) writeBatch(entries []store.LedgerEntry, logs []store.UsageLog) {
	if len(entries)+len(logs) == 0 {
		return
	}
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := w.tryWrite(entries, logs)
		if err == nil {
			return
		}
		w.log.Error("billing batch write failed; retrying", "attempt", attempt, "entries", len(entries), "logs", len(logs), "err", err)
		time.Sleep(backoff)
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

// tryWrite stores one batch. A store that can write the ledger and the logs
// in one transaction does so: a failed batch then left nothing behind, and
// its retry cannot duplicate logs. Otherwise the ledger goes first, because
// its idempotency keys make a retry after a failure in the logs harmless.
func (w *Writer) tryWrite(entries []store.LedgerEntry, logs []store.UsageLog) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if bw, ok := w.st.(store.BatchWriter); ok {
		return bw.WriteBatch(ctx, entries, logs)
	}
	if len(entries) > 0 {
		if err := w.st.Ledger().Apply(ctx, entries); err != nil {
			return err
		}
	}
	if len(logs) > 0 {
		if err := w.st.Logs().Insert(ctx, logs); err != nil {
			return err
		}
	}
	return nil
}
