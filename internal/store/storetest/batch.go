package storetest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// batchWriter returns the store's BatchWriter or skips the test: the
// interface is optional.
func batchWriter(t *testing.T, s store.Store) store.BatchWriter {
	t.Helper()
	bw, ok := s.(store.BatchWriter)
	if !ok {
		t.Skip("store does not implement store.BatchWriter")
	}
	return bw
}

func countLogs(t *testing.T, s store.Store) int {
	t.Helper()
	_, total, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{PageSize: 1})
	must(t, err, "count logs")
	return total
}

var batchTests = []namedTest{
	{"write batch records entries, balances and logs", func(t *testing.T, s store.Store) {
		bw := batchWriter(t, s)
		u := newUser(t, s, "alice", 1000)
		tok := newToken(t, s, u, "k", 500)
		entries := []store.LedgerEntry{
			{Key: "r1", Kind: store.LedgerReserve, UserID: u.ID, TokenID: tok.ID, Delta: -100, TokenDelta: -100},
			{Key: "s1", Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID, Delta: 30, TokenDelta: 30, Used: 70},
		}
		logs := []store.UsageLog{{Type: store.LogConsume, UserID: u.ID, TokenID: tok.ID, Model: "m", Quota: 70,
			RequestID: "req-1", Other: json.RawMessage(`{"stream":true}`), TeamID: 7, OrgID: 3}}
		must(t, bw.WriteBatch(ctx(t), entries, logs), "write batch")
		uq, uu, tq, tu := balances(t, s, u.ID, tok.ID)
		if uq != 930 || uu != 70 || tq != 430 || tu != 70 {
			t.Errorf("balances user %d/%d token %d/%d, want 930/70 430/70", uq, uu, tq, tu)
		}
		got, total, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{})
		must(t, err, "list logs")
		if total != 1 || got[0].RequestID != "req-1" || got[0].Quota != 70 || !jsonEqual(got[0].Other, logs[0].Other) ||
			got[0].TeamID != 7 || got[0].OrgID != 3 {
			t.Errorf("logs = %+v", got)
		}
		checkUTC(t, "stamped CreatedAt", got[0].CreatedAt)
	}},
	{"write batch with only entries, only logs or nothing", func(t *testing.T, s store.Store) {
		bw := batchWriter(t, s)
		u := newUser(t, s, "bob", 0)
		must(t, bw.WriteBatch(ctx(t), nil, nil), "empty batch")
		must(t, bw.WriteBatch(ctx(t), []store.LedgerEntry{{Key: "t", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 5}}, nil), "entries only")
		must(t, bw.WriteBatch(ctx(t), nil, []store.UsageLog{{Type: store.LogTopUp, UserID: u.ID, Quota: 5}}), "logs only")
		if delta, _, err := s.Ledger().Sum(ctx(t), u.ID); err != nil || delta != 5 {
			t.Errorf("Sum = %d (%v), want 5", delta, err)
		}
		if n := countLogs(t, s); n != 1 {
			t.Errorf("logs = %d, want 1", n)
		}
	}},
	{"a rejected write batch stores neither entries nor logs", func(t *testing.T, s store.Store) {
		bw := batchWriter(t, s)
		u := newUser(t, s, "carol", 0)
		entries := []store.LedgerEntry{{Key: "fine", UserID: u.ID, Delta: 1}, {Key: "", UserID: u.ID, Delta: 1}}
		logs := []store.UsageLog{{Type: store.LogConsume, UserID: u.ID}}
		if err := bw.WriteBatch(ctx(t), entries, logs); err == nil {
			t.Fatal("WriteBatch with an empty key succeeded")
		}
		if delta, _, err := s.Ledger().Sum(ctx(t), u.ID); err != nil || delta != 0 {
			t.Errorf("Sum = %d (%v), want 0", delta, err)
		}
		if n := countLogs(t, s); n != 0 {
			t.Errorf("logs = %d, want 0", n)
		}
	}},
	{"replayed entries in a write batch change nothing", func(t *testing.T, s store.Store) {
		bw := batchWriter(t, s)
		u := newUser(t, s, "dave", 0)
		tok := newToken(t, s, u, "k", 0)
		e := store.LedgerEntry{Key: "once", Kind: store.LedgerTopUp, UserID: u.ID, TokenID: tok.ID, Delta: 10, TokenDelta: 10, Used: 1}
		must(t, s.Ledger().Apply(ctx(t), []store.LedgerEntry{e}), "apply")
		e2 := e
		e2.Key = "twice"
		must(t, bw.WriteBatch(ctx(t), []store.LedgerEntry{e, e2, e2}, []store.UsageLog{{Type: store.LogConsume, UserID: u.ID}}), "write batch")
		uq, uu, tq, tu := balances(t, s, u.ID, tok.ID)
		if uq != 20 || uu != 2 || tq != 20 || tu != 2 {
			t.Errorf("balances user %d/%d token %d/%d, want 20/2 20/2", uq, uu, tq, tu)
		}
	}},
	{"concurrent write batches are exact and keep every log", func(t *testing.T, s store.Store) {
		bw := batchWriter(t, s)
		var mu sync.Mutex
		written := 0
		testLedgerConcurrency(t, s, func(batch []store.LedgerEntry) error {
			logs := make([]store.UsageLog, len(batch)/3)
			for i := range logs {
				logs[i] = store.UsageLog{Type: store.LogConsume, UserID: batch[0].UserID, Model: "m", RequestID: batch[i].Key}
			}
			if err := bw.WriteBatch(ctx(t), batch, logs); err != nil {
				return err
			}
			mu.Lock()
			written += len(logs)
			mu.Unlock()
			return nil
		})
		if n := countLogs(t, s); n != written {
			t.Errorf("logs = %d, want %d", n, written)
		}
	}},
}
