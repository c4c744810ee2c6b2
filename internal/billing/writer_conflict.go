package billing

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// RecordedEntries is implemented by stores that can return the ledger
// entries recorded under keys, so the writer can tell a replay from a
// conflict (see checkConflicts) in one indexed read.
type RecordedEntries interface {
	Entries(ctx context.Context, keys []string) (map[string]store.LedgerEntry, error)
}

// checkConflicts raises the alarm for idempotency keys that were taken
// when they must have been new. Every key is made fresh (a UUIDv7) for one
// movement, so on the first attempt at a batch an unguarded entry (a
// reserve, a top-up, an adjustment: no Close or Keep) that was not written
// found its key already recorded by someone else — two movements share a
// key and one of them is lost from the ledger. That is never silent: it is
// logged at error level, with the item, and counted in
// turnpike_idempotency_conflicts_total. A retried batch is not checked,
// because an earlier attempt whose commit was reported failed may have
// stored it (a replay legitimately finds its own keys), and guarded items
// are not, because an end that finds its hold already ended (by the sweep,
// by another node) is the designed outcome.
//
// Nor is an entry whose key holds that very movement (replayOf): a sweep
// that stored a lapsed node's answered call brought its lost reserve along,
// and the node's own copy of that reserve, written later, finds it there.
// That is logged at debug level and not counted.
func (w *Writer) checkConflicts(batch []store.BillingItem, written []bool) {
	if written == nil {
		return
	}
	var refused []int
	for i, it := range batch {
		if it.Entry == nil || it.Close != "" || it.Keep != "" || written[i] {
			continue
		}
		refused = append(refused, i)
	}
	if len(refused) == 0 {
		return
	}
	recorded := w.recorded(batch, refused)
	for _, i := range refused {
		it := batch[i]
		if rec, ok := recorded[it.Entry.Key]; ok && replayOf(it, rec) {
			w.log.Debug("ledger entry already recorded by another writer (a sweep stored it): nothing to do",
				"key", it.Entry.Key, "request_id", requestIDOf(it))
			continue
		}
		w.conflicts.Add(1)
		w.log.Error("idempotency key conflict: a new ledger entry's key was already recorded, so the entry was not written",
			"key", it.Entry.Key, "request_id", requestIDOf(it), "item", describe(it))
	}
}

// recorded reads the entries recorded under the refused items' keys; nil
// (every refusal an alarm) when the read fails.
func (w *Writer) recorded(batch []store.BillingItem, refused []int) map[string]store.LedgerEntry {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stop := context.AfterFunc(w.stop, cancel)
	defer stop()
	keys := make([]string, len(refused))
	for k, i := range refused {
		keys[k] = batch[i].Entry.Key
	}
	var out map[string]store.LedgerEntry
	var err error
	if re, ok := w.st.(RecordedEntries); ok {
		out, err = re.Entries(ctx, keys)
	} else {
		out, err = recentEntries(ctx, w.st.Ledger(), batch, refused)
	}
	if err != nil {
		w.log.Warn("could not read the ledger entries of refused keys; each counts as a conflict", "err", err)
		return nil
	}
	return out
}

// recentEntries finds the refused keys among their users' latest ledger
// entries, for a store (a wrapper) that does not offer RecordedEntries: a
// replay finds a movement recorded moments before. A key not among them
// stays an alarm.
func recentEntries(ctx context.Context, ledger store.LedgerRepo, batch []store.BillingItem, refused []int) (map[string]store.LedgerEntry, error) {
	want := map[string]bool{}
	users := map[int64]bool{}
	for _, i := range refused {
		want[batch[i].Entry.Key] = true
		users[batch[i].Entry.UserID] = true
	}
	out := map[string]store.LedgerEntry{}
	for u := range users {
		entries, _, err := ledger.List(ctx, u, store.Page{Page: 1, PageSize: 200})
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if want[e.Key] {
				out[e.Key] = e
			}
		}
	}
	return out, nil
}

// replayOf reports that rec, recorded under the key of it's entry, is the
// movement it describes: the same entry (kind, account and amounts), or,
// for a reserve that opens a hold, that reserve netted with its hold's end
// for the same account — the one entry a batch writes for a hold opened
// and ended in it (sqlstore's pairUp: the end's kind, the reserve's key,
// the net movement, which then charges exactly what it counts as used).
func replayOf(it store.BillingItem, rec store.LedgerEntry) bool {
	e := it.Entry
	sameAccount := rec.UserID == e.UserID && rec.TokenID == e.TokenID && rec.TeamID == e.TeamID
	if !sameAccount {
		return false
	}
	if rec.Kind == e.Kind {
		return rec.Delta == e.Delta && rec.TokenDelta == e.TokenDelta && rec.Used == e.Used
	}
	netted := rec.Delta == -rec.Used && rec.TokenDelta == -rec.Used
	return it.Open != nil && e.Kind == store.LedgerReserve && netted &&
		(rec.Kind == store.LedgerSettle || rec.Kind == store.LedgerRefund)
}

func requestIDOf(it store.BillingItem) string {
	if it.Log != nil {
		return it.Log.RequestID
	}
	return ""
}
