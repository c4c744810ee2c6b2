package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// balances reads a user's and a token's quota and used quota.
func balances(t *testing.T, s store.Store, userID, tokenID int64) (uq, uu, tq, tu int64) {
	t.Helper()
	u, err := s.Users().Get(ctx(t), userID)
	must(t, err, "get user")
	tok, err := s.Tokens().Get(ctx(t), tokenID)
	must(t, err, "get token")
	return u.Quota, u.UsedQuota, tok.Quota, tok.UsedQuota
}

var ledgerTests = []namedTest{
	{"apply moves user and token balances", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "alice", 1000)
		tok := newToken(t, s, u, "k", 300)
		entries := []store.LedgerEntry{
			{Key: "r1", Kind: store.LedgerReserve, UserID: u.ID, TokenID: tok.ID, Delta: -100, TokenDelta: -100},
			{Key: "s1", Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID, Delta: 40, TokenDelta: 40, Used: 60},
			{Key: "t1", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 500},
		}
		must(t, s.Ledger().Apply(ctx(t), entries), "apply")
		uq, uu, tq, tu := balances(t, s, u.ID, tok.ID)
		if uq != 1440 || uu != 60 || tq != 240 || tu != 60 {
			t.Errorf("balances user %d/%d token %d/%d, want 1440/60 240/60", uq, uu, tq, tu)
		}
		delta, used, err := s.Ledger().Sum(ctx(t), u.ID)
		must(t, err, "sum")
		if delta != 440 || used != 60 {
			t.Errorf("Sum = %d, %d, want 440, 60", delta, used)
		}
	}},
	{"replayed keys change nothing, within and across batches", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "bob", 0)
		tok := newToken(t, s, u, "k", 100)
		e := store.LedgerEntry{Key: "once", Kind: store.LedgerTopUp, UserID: u.ID, TokenID: tok.ID, Delta: 10, TokenDelta: 5, Used: 1}
		must(t, s.Ledger().Apply(ctx(t), []store.LedgerEntry{e, e}), "apply twice in one batch")
		must(t, s.Ledger().Apply(ctx(t), []store.LedgerEntry{e}), "replay")
		e2 := e
		e2.Key = "second"
		must(t, s.Ledger().Apply(ctx(t), []store.LedgerEntry{e, e2}), "replay mixed with new")
		uq, uu, tq, tu := balances(t, s, u.ID, tok.ID)
		if uq != 20 || uu != 2 || tq != 110 || tu != 2 {
			t.Errorf("balances user %d/%d token %d/%d, want 20/2 110/2", uq, uu, tq, tu)
		}
		_, total, err := s.Ledger().List(ctx(t), u.ID, store.Page{})
		must(t, err, "list")
		if total != 2 {
			t.Errorf("ledger rows = %d, want 2", total)
		}
	}},
	{"unlimited token stays unlimited but counts usage", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "carol", 100)
		tok := newToken(t, s, u, "k", -1)
		must(t, s.Ledger().Apply(ctx(t), []store.LedgerEntry{
			{Key: "a", Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID, Delta: -30, TokenDelta: -30, Used: 30},
		}), "apply")
		_, _, tq, tu := balances(t, s, u.ID, tok.ID)
		if tq != -1 || tu != 30 {
			t.Errorf("token quota %d used %d, want -1 and 30", tq, tu)
		}
	}},
	{"invalid keys are rejected and nothing is applied", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "dave", 0)
		long := make([]byte, 256)
		for i := range long {
			long[i] = 'k'
		}
		for name, key := range map[string]string{"empty key": "", "key over 255 bytes": string(long)} {
			err := s.Ledger().Apply(ctx(t), []store.LedgerEntry{
				{Key: "fine", UserID: u.ID, Delta: 1}, {Key: key, UserID: u.ID, Delta: 1},
			})
			if err == nil {
				t.Errorf("%s: Apply succeeded", name)
			}
		}
		delta, _, err := s.Ledger().Sum(ctx(t), u.ID)
		must(t, err, "sum")
		if delta != 0 {
			t.Errorf("a rejected batch applied %d", delta)
		}
	}},
	{"list is newest first, pages, and filters by user", func(t *testing.T, s store.Store) {
		a, b := newUser(t, s, "a", 0), newUser(t, s, "b", 0)
		var entries []store.LedgerEntry
		for i := range 5 {
			entries = append(entries, store.LedgerEntry{Key: fmt.Sprintf("a%d", i), Kind: store.LedgerTopUp, UserID: a.ID, Delta: int64(i + 1)})
		}
		entries = append(entries, store.LedgerEntry{Key: "b0", Kind: store.LedgerTopUp, UserID: b.ID, Delta: 9})
		must(t, s.Ledger().Apply(ctx(t), entries), "apply")
		got, total, err := s.Ledger().List(ctx(t), a.ID, store.Page{Page: 1, PageSize: 2})
		must(t, err, "list")
		if total != 5 || len(got) != 2 || got[0].Key != "a4" || got[1].Key != "a3" {
			t.Fatalf("total %d, got %+v", total, got)
		}
		e := got[0]
		if e.ID == 0 || e.Kind != store.LedgerTopUp || e.UserID != a.ID || e.Delta != 5 {
			t.Errorf("entry = %+v", e)
		}
		checkUTC(t, "CreatedAt", e.CreatedAt)
		_, total, err = s.Ledger().List(ctx(t), 0, store.Page{})
		must(t, err, "list all")
		if total != 6 {
			t.Errorf("all total = %d, want 6", total)
		}
	}},
	{"sum of a user without entries is zero", func(t *testing.T, s store.Store) {
		delta, used, err := s.Ledger().Sum(ctx(t), 12345)
		must(t, err, "sum")
		if delta != 0 || used != 0 {
			t.Errorf("Sum = %d, %d", delta, used)
		}
	}},
	{"empty batch is a no-op", func(t *testing.T, s store.Store) {
		must(t, s.Ledger().Apply(ctx(t), nil), "apply nil")
	}},
	{"batches of every size record each new key once and in order", testLedgerBatchSizes},
	{"concurrent batches on one user and token are exact", func(t *testing.T, s store.Store) {
		testLedgerConcurrency(t, s, func(batch []store.LedgerEntry) error { return s.Ledger().Apply(ctx(t), batch) })
	}},
}

// batchSizes straddle the row counts a store may group rows by.
var batchSizes = []int{1, 3, 4, 5, 16, 17, 63, 64, 65, 150}

func testLedgerBatchSizes(t *testing.T, s store.Store) {
	u := newUser(t, s, "sizes", 0)
	tok := newToken(t, s, u, "k", 0)
	var order []string // keys in the order they were first applied
	var wantDelta int64
	entry := func(key string, delta int64) store.LedgerEntry {
		return store.LedgerEntry{Key: key, Kind: store.LedgerTopUp, UserID: u.ID, TokenID: tok.ID, Delta: delta, TokenDelta: 1, Used: 1}
	}
	for _, n := range batchSizes {
		var fresh []store.LedgerEntry
		for i := range n {
			e := entry(fmt.Sprintf("n%d-%d", n, i), int64(len(order)+1))
			fresh, order, wantDelta = append(fresh, e), append(order, e.Key), wantDelta+e.Delta
		}
		must(t, s.Ledger().Apply(ctx(t), fresh), fmt.Sprintf("apply %d", n))
		// Replays of every other entry, with other amounts that must not
		// count, interleaved with new keys.
		var mixed []store.LedgerEntry
		for i := 0; i < n; i += 2 {
			e := entry(fmt.Sprintf("n%d-again-%d", n, i), 1000)
			mixed, order, wantDelta = append(mixed, entry(fresh[i].Key, 999), e), append(order, e.Key), wantDelta+e.Delta
		}
		must(t, s.Ledger().Apply(ctx(t), mixed), fmt.Sprintf("apply %d mixed with replays", n))
	}
	delta, used, err := s.Ledger().Sum(ctx(t), u.ID)
	must(t, err, "sum")
	uq, uu, tq, tu := balances(t, s, u.ID, tok.ID)
	n := int64(len(order))
	if delta != wantDelta || used != n || uq != wantDelta || uu != n || tq != n || tu != n {
		t.Errorf("Sum %d/%d, user %d/%d, token %d/%d; want delta %d and %d everywhere else", delta, used, uq, uu, tq, tu, wantDelta, n)
	}
	got, total, err := s.Ledger().List(ctx(t), u.ID, store.Page{PageSize: 1000})
	must(t, err, "list")
	if total != len(order) || len(got) != len(order) {
		t.Fatalf("ledger has %d rows (listed %d), want %d", total, len(got), len(order))
	}
	for i, e := range got {
		if want := order[len(order)-1-i]; e.Key != want {
			t.Fatalf("row %d from the newest is %q, want %q: ids must follow the order of application", i, e.Key, want)
		}
	}
}

// testLedgerConcurrency runs 50 goroutines that each apply several batches
// through apply against the same user and token, half of them also
// replaying keys that other goroutines apply, and checks that every key
// counted exactly once.
func testLedgerConcurrency(t *testing.T, s store.Store, apply func([]store.LedgerEntry) error) {
	const (
		workers   = 50
		batches   = 4
		perBatch  = 10
		startUser = 1_000_000
		startTok  = 500_000
	)
	u := newUser(t, s, "busy", startUser)
	tok := newToken(t, s, u, "k", startTok)
	other := newUser(t, s, "bystander", 0)
	entry := func(key string, i int) store.LedgerEntry {
		return store.LedgerEntry{Key: key, Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID,
			Delta: -int64(i%7 + 1), TokenDelta: -int64(i%7 + 1), Used: int64(i%5 + 1)}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*batches)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				var batch []store.LedgerEntry
				for i := range perBatch {
					n := (w*batches+b)*perBatch + i
					batch = append(batch, entry(fmt.Sprintf("w%d-b%d-%d", w, b, i), n))
				}
				// Replays of a neighbour's first batch race with the neighbour.
				if w%2 == 1 {
					for i := range 3 {
						n := ((w-1)*batches)*perBatch + i
						batch = append(batch, entry(fmt.Sprintf("w%d-b0-%d", w-1, i), n))
					}
				}
				batch = append(batch, store.LedgerEntry{Key: fmt.Sprintf("other-%d-%d", w, b), UserID: other.ID, Delta: 1})
				if err := apply(batch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Apply: %v", err)
	}
	var wantDelta, wantUsed int64
	for n := range workers * batches * perBatch {
		e := entry("", n)
		wantDelta += e.Delta
		wantUsed += e.Used
	}
	uq, uu, tq, tu := balances(t, s, u.ID, tok.ID)
	if uq != startUser+wantDelta || uu != wantUsed || tq != startTok+wantDelta || tu != wantUsed {
		t.Errorf("balances user %d/%d token %d/%d, want %d/%d %d/%d",
			uq, uu, tq, tu, startUser+wantDelta, wantUsed, startTok+wantDelta, wantUsed)
	}
	delta, used, err := s.Ledger().Sum(ctx(t), u.ID)
	must(t, err, "sum")
	if delta != wantDelta || used != wantUsed {
		t.Errorf("Sum = %d, %d, want %d, %d", delta, used, wantDelta, wantUsed)
	}
	if delta, _, err := s.Ledger().Sum(ctx(t), other.ID); err != nil || delta != workers*batches {
		t.Errorf("bystander Sum = %d (%v), want %d", delta, err, workers*batches)
	}
}
