package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func itemWriter(t *testing.T, s store.Store) store.BatchWriter { return batchWriter(t, s) }

// reserveItem, settleItem and refundItem are the items of one hold's life,
// as the billing writer builds them.
func reserveItem(key, owner string, u *store.User, tok *store.Token, amount int64) store.BillingItem {
	return store.BillingItem{
		Entry: &store.LedgerEntry{Key: key + ":reserve", Kind: store.LedgerReserve, UserID: u.ID, TokenID: tok.ID, Delta: -amount, TokenDelta: -amount},
		Open:  &store.Hold{Key: key, Owner: owner, UserID: u.ID, TokenID: tok.ID, Amount: amount},
	}
}

func settleItem(key string, u *store.User, tok *store.Token, reserved, charge int64) store.BillingItem {
	diff := reserved - charge
	return store.BillingItem{
		Entry: &store.LedgerEntry{Key: key + ":settle", Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID, Delta: diff, TokenDelta: diff, Used: charge},
		Log:   &store.UsageLog{Type: store.LogConsume, UserID: u.ID, TokenID: tok.ID, Quota: charge, RequestID: key},
		Close: key,
	}
}

func refundItem(key string, u *store.User, tok *store.Token, reserved int64) store.BillingItem {
	return store.BillingItem{
		Entry: &store.LedgerEntry{Key: key + ":refund", Kind: store.LedgerRefund, UserID: u.ID, TokenID: tok.ID, Delta: reserved, TokenDelta: reserved},
		Log:   &store.UsageLog{Type: store.LogError, UserID: u.ID, TokenID: tok.ID, RequestID: key},
		Close: key,
	}
}

func openHolds(t *testing.T, s store.Store) []store.Hold {
	t.Helper()
	hs, err := s.Holds().List(ctx(t))
	must(t, err, "list holds")
	return hs
}

var holdTests = []namedTest{
	{"a reserve opens a hold and its settle closes it with its row", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "alice", 1000)
		tok := newToken(t, s, u, "k", 500)
		got, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("h1", "node-a", u, tok, 100)})
		must(t, err, "reserve")
		if hs := openHolds(t, s); len(got) != 1 || !got[0] || len(hs) != 1 || hs[0].Owner != "node-a" || hs[0].Amount != 100 {
			t.Fatalf("written %v, holds %+v", got, hs)
		}
		got, err = w.WriteItems(ctx(t), []store.BillingItem{settleItem("h1", u, tok, 100, 70)})
		must(t, err, "settle")
		uq, uu, tq, _ := balances(t, s, u.ID, tok.ID)
		if !got[0] || uq != 930 || uu != 70 || tq != 430 || countLogs(t, s) != 1 || len(openHolds(t, s)) != 0 {
			t.Errorf("written %v, user %d/%d token %d, logs %d", got, uq, uu, tq, countLogs(t, s))
		}
	}},
	{"a batch that opens holds, pairs one and ends an older one moves every balance once", func(t *testing.T, s store.Store) {
		// The new entries of one batch are recorded in two steps (the
		// unguarded items, then the ends whose hold was open); both
		// steps' entries must reach the balances.
		w := itemWriter(t, s)
		u := newUser(t, s, "erin", 1000)
		tok := newToken(t, s, u, "k", 500)
		_, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("h1", "n", u, tok, 100)})
		must(t, err, "first batch")
		got, err := w.WriteItems(ctx(t), []store.BillingItem{
			reserveItem("h2", "n", u, tok, 200), reserveItem("h3", "n", u, tok, 80), settleItem("h3", u, tok, 80, 50),
			settleItem("h1", u, tok, 100, 70),
		})
		must(t, err, "second batch")
		uq, uu, tq, _ := balances(t, s, u.ID, tok.ID)
		hs := openHolds(t, s)
		if len(got) != 4 || !got[0] || !got[1] || !got[2] || !got[3] || uq != 680 || uu != 120 || tq != 180 ||
			countLogs(t, s) != 2 || len(hs) != 1 || hs[0].Key != "h2" {
			t.Errorf("written %v, user %d/%d token %d, logs %d, holds %+v; want user 680/120, token 180, 2 logs, hold h2",
				got, uq, uu, tq, countLogs(t, s), hs)
		}
	}},
	{"a hold opened and ended in one batch ends once", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "bob", 1000)
		tok := newToken(t, s, u, "k", -1)
		got, err := w.WriteItems(ctx(t), []store.BillingItem{
			reserveItem("h", "n", u, tok, 100), settleItem("h", u, tok, 100, 40), refundItem("h", u, tok, 100),
		})
		must(t, err, "write")
		uq, _, _, _ := balances(t, s, u.ID, tok.ID)
		if !got[0] || !got[1] || got[2] || uq != 960 || countLogs(t, s) != 1 {
			t.Errorf("written %v, user quota %d, logs %d; want settle only", got, uq, countLogs(t, s))
		}
	}},
	{"a hold opened and ended in one batch is one net ledger entry and never a hold row", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "bea", 1000)
		tok := newToken(t, s, u, "k", 500)
		got, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("h", "n", u, tok, 100), settleItem("h", u, tok, 100, 40)})
		must(t, err, "write")
		entries, _, err := s.Ledger().List(ctx(t), u.ID, store.Page{PageSize: 10})
		must(t, err, "list ledger")
		var mine []store.LedgerEntry
		for _, e := range entries {
			if e.Kind != store.LedgerTopUp {
				mine = append(mine, e)
			}
		}
		uq, uu, tq, tu := balances(t, s, u.ID, tok.ID)
		if !got[0] || !got[1] || len(mine) != 1 || mine[0].Delta != -40 || mine[0].Used != 40 || len(openHolds(t, s)) != 0 ||
			uq != 960 || uu != 40 || tq != 460 || tu != 40 {
			t.Errorf("written %v, entries %+v, user %d/%d token %d/%d", got, mine, uq, uu, tq, tu)
		}
	}},
	{"a reserve committed before and replayed with its settle ends the stored hold once", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "ben", 1000)
		tok := newToken(t, s, u, "k", -1)
		_, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("h", "n", u, tok, 100)})
		must(t, err, "reserve")
		got, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("h", "n", u, tok, 100), settleItem("h", u, tok, 100, 40)})
		must(t, err, "replay with settle")
		uq, uu, _, _ := balances(t, s, u.ID, tok.ID)
		if got[0] || !got[1] || uq != 960 || uu != 40 || len(openHolds(t, s)) != 0 || countLogs(t, s) != 1 {
			t.Errorf("written %v, user %d/%d, holds %d, logs %d", got, uq, uu, len(openHolds(t, s)), countLogs(t, s))
		}
	}},
	{"ending a hold that is no longer open writes neither entry nor row", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "carol", 1000)
		tok := newToken(t, s, u, "k", -1)
		_, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("h", "n", u, tok, 100)})
		must(t, err, "reserve")
		_, err = w.WriteItems(ctx(t), []store.BillingItem{refundItem("h", u, tok, 100)})
		must(t, err, "refund")
		got, err := w.WriteItems(ctx(t), []store.BillingItem{settleItem("h", u, tok, 100, 40)})
		must(t, err, "late settle")
		uq, uu, _, _ := balances(t, s, u.ID, tok.ID)
		if got[0] || uq != 1000 || uu != 0 || countLogs(t, s) != 1 {
			t.Errorf("written %v, user %d/%d, logs %d", got, uq, uu, countLogs(t, s))
		}
	}},
	{"a replayed batch of items writes nothing twice", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "dave", 1000)
		tok := newToken(t, s, u, "k", 1000)
		batch := []store.BillingItem{reserveItem("h", "n", u, tok, 100), settleItem("h", u, tok, 100, 30),
			{Log: &store.UsageLog{Type: store.LogTopUp, UserID: u.ID, Quota: 5, RequestID: "t"},
				Entry: &store.LedgerEntry{Key: "t", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 5}}}
		for range 2 {
			_, err := w.WriteItems(ctx(t), batch)
			must(t, err, "write")
		}
		uq, uu, tq, _ := balances(t, s, u.ID, tok.ID)
		if uq != 975 || uu != 30 || tq != 970 || countLogs(t, s) != 2 || len(openHolds(t, s)) != 0 {
			t.Errorf("user %d/%d token %d logs %d holds %d", uq, uu, tq, countLogs(t, s), len(openHolds(t, s)))
		}
	}},
	{"a kept hold is out of the sweep's reach and still ends once", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "erin", 1000)
		tok := newToken(t, s, u, "k", -1)
		_, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("h", "dead", u, tok, 100),
			{Keep: "h", Log: &store.UsageLog{Type: store.LogConsume, UserID: u.ID, Quota: 100}}})
		must(t, err, "reserve and keep")
		lapsed, err := s.Holds().Lapsed(ctx(t), time.Now(), "", 10)
		must(t, err, "lapsed")
		if len(lapsed) != 0 || countLogs(t, s) != 1 {
			t.Fatalf("lapsed %+v, logs %d", lapsed, countLogs(t, s))
		}
		got, err := w.WriteItems(ctx(t), []store.BillingItem{settleItem("h", u, tok, 100, 100)})
		must(t, err, "settle")
		if !got[0] || len(openHolds(t, s)) != 0 {
			t.Errorf("written %v, holds %+v", got, openHolds(t, s))
		}
	}},
	{"lapsed lists holds of expired or unknown owners, not live ones", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "frank", 1000)
		tok := newToken(t, s, u, "k", -1)
		now := time.Now()
		must(t, s.Holds().Lease(ctx(t), "live", now.Add(time.Minute)), "lease live")
		must(t, s.Holds().Lease(ctx(t), "dead", now.Add(-time.Second)), "lease dead")
		must(t, s.Holds().Lease(ctx(t), "dead", now.Add(-time.Second)), "renew with the same value")
		_, err := w.WriteItems(ctx(t), []store.BillingItem{reserveItem("a", "live", u, tok, 1), reserveItem("b", "dead", u, tok, 2),
			reserveItem("c", "never-leased", u, tok, 3), reserveItem("d", "me", u, tok, 4)})
		must(t, err, "reserve")
		lapsed, err := s.Holds().Lapsed(ctx(t), now, "me", 10)
		must(t, err, "lapsed")
		keys := map[string]bool{}
		for _, h := range lapsed {
			keys[h.Key] = true
		}
		if len(lapsed) != 2 || !keys["b"] || !keys["c"] {
			t.Errorf("lapsed = %+v, want b and c", lapsed)
		}
		must(t, s.Holds().Forget(ctx(t), now), "forget")
	}},
	{"concurrent enders of the same holds end each exactly once", func(t *testing.T, s store.Store) {
		w := itemWriter(t, s)
		u := newUser(t, s, "gina", 100000)
		tok := newToken(t, s, u, "k", -1)
		const n = 40
		var opens []store.BillingItem
		for i := range n {
			opens = append(opens, reserveItem(keyOf(i), "n", u, tok, 10))
		}
		_, err := w.WriteItems(ctx(t), opens)
		must(t, err, "reserve")
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var items []store.BillingItem
				for i := range n {
					if g%2 == 0 {
						items = append(items, settleItem(keyOf(i), u, tok, 10, 7))
					} else {
						items = append(items, refundItem(keyOf(i), u, tok, 10))
					}
				}
				if _, err := w.WriteItems(ctx(t), items); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		uq, uu, _, _ := balances(t, s, u.ID, tok.ID)
		delta, used, err := s.Ledger().Sum(ctx(t), u.ID)
		must(t, err, "sum")
		if countLogs(t, s) != n || len(openHolds(t, s)) != 0 || 100000+delta != uq || used != uu {
			t.Errorf("logs %d holds %d; user %d/%d ledger %d/%d", countLogs(t, s), len(openHolds(t, s)), uq, uu, delta, used)
		}
	}},
}

func keyOf(i int) string { return "hold-" + string(rune('a'+i/26)) + string(rune('a'+i%26)) }
