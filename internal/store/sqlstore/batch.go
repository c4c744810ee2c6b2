package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var _ store.BatchWriter = (*Store)(nil)

// WriteBatch records ledger entries as LedgerRepo.Apply does and inserts
// usage logs as LogRepo.Insert does, in a single transaction: either the
// whole batch is stored or nothing of it is.
func (s *Store) WriteBatch(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	return wrap(s.write(ctx, entries, logs), "write billing batch")
}

// WriteItems writes billing items in one transaction; see store.BillingItem.
func (s *Store) WriteItems(ctx context.Context, items []store.BillingItem) ([]bool, error) {
	written, err := s.writeItems(ctx, items)
	return written, wrap(err, "write billing items")
}

// write is the transaction behind Apply and WriteBatch: every entry and
// every log is an item of its own.
func (s *Store) write(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	items := make([]store.BillingItem, 0, len(entries)+len(logs))
	for i := range entries {
		items = append(items, store.BillingItem{Entry: &entries[i]})
	}
	for i := range logs {
		items = append(items, store.BillingItem{Log: &logs[i]})
	}
	_, err := s.writeItems(ctx, items)
	return err
}

func (s *Store) writeItems(ctx context.Context, items []store.BillingItem) ([]bool, error) {
	if len(items) == 0 {
		return nil, nil
	}
	for _, it := range items {
		if it.Entry != nil {
			if err := checkKeys([]store.LedgerEntry{*it.Entry}); err != nil {
				return nil, err
			}
		}
	}
	b, err := s.batch(ctx)
	if err != nil {
		return nil, err
	}
	stamp := now()
	careful := false
	var written []bool
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		bt := &itemTx{s: s, tx: tx, b: b, items: items, stamp: stamp, careful: careful}
		err := bt.run(ctx)
		if errors.Is(err, errLedgerRace) {
			careful = true
		}
		written = bt.written
		return err
	})
	if err != nil {
		return nil, err
	}
	return written, nil
}

// itemTx is one attempt at writing a batch of items. Unguarded items (no
// Close or Keep) go first, so a hold opened and ended within one batch is
// open by the time its end is checked.
type itemTx struct {
	s       *Store
	tx      *sql.Tx
	b       *batchStmts
	items   []store.BillingItem
	stamp   time.Time
	careful bool

	seen    map[string]bool // entry keys met in this batch
	fresh   []store.LedgerEntry
	written []bool
	// merged maps an item that opens a hold to the later item of the same
	// batch that ends it, and done marks such ends once their pair was
	// written as one (see pairUp).
	merged map[int]int
	done   []bool
}

func (t *itemTx) run(ctx context.Context) error {
	t.seen = make(map[string]bool, len(t.items))
	t.written = make([]bool, len(t.items))
	var plain, guarded []int
	for i, it := range t.items {
		if it.Close == "" && it.Keep == "" {
			plain = append(plain, i)
		} else {
			guarded = append(guarded, i)
		}
	}
	t.pairUp(plain, guarded)
	if err := t.insertEntries(ctx, plain); err != nil {
		return err
	}
	if err := t.openHolds(ctx, plain); err != nil {
		return err
	}
	passed, err := t.guard(ctx, guarded)
	if err != nil {
		return err
	}
	if err := t.insertEntries(ctx, passed); err != nil {
		return err
	}
	if err := moveBalances(ctx, t.tx, t.b, sumBalances(t.fresh, nil)); err != nil {
		return err
	}
	if err := t.s.addLedgerRollups(ctx, t.tx, t.b, t.fresh, t.stamp); err != nil {
		return err
	}
	// Counted first: a usage row is some 300 bytes, and growing the slice
	// by appending copied each row about twice more, a third of the bytes
	// a batch allocated.
	n := 0
	for i, it := range t.items {
		if t.written[i] && it.Log != nil {
			n++
		}
	}
	logs := make([]store.UsageLog, 0, n)
	for i, it := range t.items {
		if t.written[i] && it.Log != nil {
			logs = append(logs, *it.Log)
		}
	}
	if err := insertLogs(ctx, t.tx, t.b, logs, t.stamp); err != nil {
		return err
	}
	return t.s.addRollups(ctx, t.tx, t.b, logs, t.stamp, true)
}

// insertEntries records the entries of the items at idx and marks as
// written the items whose entry was new (or that have none).
func (t *itemTx) insertEntries(ctx context.Context, idx []int) error {
	entries := make([]store.LedgerEntry, 0, len(idx))
	owner := make([]int, 0, len(idx))
	for _, i := range idx {
		e := t.items[i].Entry
		if j, ok := t.merged[i]; ok {
			m := mergeEntries(e, t.items[j].Entry)
			e = &m
		}
		if e == nil {
			t.written[i] = true
			continue
		}
		if t.seen[e.Key] {
			continue
		}
		t.seen[e.Key] = true
		entries, owner = append(entries, *e), append(owner, i)
	}
	if len(entries) == 0 {
		return nil
	}
	var fresh []bool
	var err error
	if t.s.dialect == MySQL {
		fresh, err = insertLedgerIgnore(ctx, t.tx, t.b, entries, t.stamp, t.careful)
	} else {
		fresh, err = insertLedgerReturning(ctx, t.tx, t.b, entries, t.stamp, t.careful)
	}
	if err != nil {
		return err
	}
	all := t.fresh == nil && !slices.Contains(fresh, false)
	if all {
		// The usual first call: every entry is new, and t.fresh can be
		// the entries themselves, capped so that a later call's
		// appends copy instead of writing past them.
		t.fresh = entries[:len(entries):len(entries)]
	} else {
		t.fresh = slices.Grow(t.fresh, len(entries))
	}
	for k, ok := range fresh {
		if ok {
			t.written[owner[k]] = true
			if !all {
				t.fresh = append(t.fresh, entries[k])
			}
			if j, paired := t.merged[owner[k]]; paired {
				t.written[j], t.done[j] = true, true
			}
		}
	}
	return nil
}

// pairUp finds each hold opened by one item and ended by a later item of
// the same batch (most calls settle within one 100 ms batch). Such a pair
// is written as one ledger entry — the net movement under the reserve's
// key — and the hold never gets a row: inserting it and deleting it again
// in the same commit was a quarter of the writer's time under load. The
// reserve's key stays the idempotency key, so a replayed batch finds it
// and writes nothing twice; when it is found (the reserve was committed
// before), the end goes through the hold table as usual. A hold some item
// hands over (Keep) is never paired: its row must outlive the batch.
func (t *itemTx) pairUp(plain, guarded []int) {
	t.merged, t.done = make(map[int]int, len(plain)), make([]bool, len(t.items))
	ends := make(map[string]int, len(guarded))
	kept := map[string]bool{}
	for _, i := range guarded {
		it := t.items[i]
		switch {
		case it.Keep != "":
			kept[it.Keep] = true
		case it.Close != "" && it.Entry != nil:
			if _, dup := ends[it.Close]; !dup {
				ends[it.Close] = i
			}
		}
	}
	for _, i := range plain {
		it := t.items[i]
		if it.Open == nil || it.Entry == nil || kept[it.Open.Key] {
			continue
		}
		if j, ok := ends[it.Open.Key]; ok && j > i && sameAccount(it.Entry, t.items[j].Entry) {
			t.merged[i] = j
		}
	}
}

func sameAccount(a, b *store.LedgerEntry) bool {
	return a.UserID == b.UserID && a.TokenID == b.TokenID && a.TeamID == b.TeamID
}

// mergeEntries is the reserve and the end of one hold as one movement:
// the end's kind and charge, the net deltas, the reserve's key.
func mergeEntries(reserve, end *store.LedgerEntry) store.LedgerEntry {
	m := *end
	m.Key = reserve.Key
	m.Delta += reserve.Delta
	m.TokenDelta += reserve.TokenDelta
	m.Used += reserve.Used
	return m
}

// openHolds records the holds of written items that open one and were
// not ended in the same batch.
func (t *itemTx) openHolds(ctx context.Context, idx []int) error {
	var holds []*store.Hold
	for _, i := range idx {
		if j, paired := t.merged[i]; paired && t.done[j] {
			continue
		}
		if t.written[i] && t.items[i].Open != nil {
			holds = append(holds, t.items[i].Open)
		}
	}
	return openHolds(ctx, t.tx, t.s, holds)
}

// guard hands over and ends holds, in item order for hand-overs, and
// returns the items whose hold was open. Two items ending the same hold in
// one batch: only the first passes.
func (t *itemTx) guard(ctx context.Context, idx []int) ([]int, error) {
	ok := map[int]bool{}
	var closing []string
	for _, i := range idx {
		it := t.items[i]
		if t.done[i] {
			continue // written with the reserve it ended
		}
		ok[i] = true
		if it.Keep != "" {
			kept, err := keepHold(ctx, t.tx, t.s, it.Keep)
			if err != nil {
				return nil, err
			}
			ok[i] = kept
		}
		if ok[i] && it.Close != "" {
			closing = append(closing, it.Close)
		}
	}
	slices.Sort(closing)
	open, err := closeHolds(ctx, t.tx, t.s, slices.Compact(closing))
	if err != nil {
		return nil, err
	}
	var passed []int
	for _, i := range idx {
		if key := t.items[i].Close; ok[i] && key != "" {
			ok[i] = open[key]
			delete(open, key)
		}
		if ok[i] {
			passed = append(passed, i)
		}
	}
	return passed, nil
}
