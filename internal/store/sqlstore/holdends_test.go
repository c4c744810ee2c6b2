package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// The budget sweep asks how a dead node's holds ended: a settle (netted
// with its reserve in one entry, or stored after it) with its charge, a
// hold handed to a durable record, or neither (refunded, released, still
// open, or never stored).
func TestHoldEndsTellSettledChargesFromKeptAndOtherHolds(t *testing.T) {
	for name, s := range trafficStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			u := &store.User{Username: "u", PasswordHash: "x", Role: "user", Group: "default"}
			if err := s.Users().Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC()
			reserve := func(key string, amount int64) store.BillingItem {
				return store.BillingItem{
					Entry: &store.LedgerEntry{Key: key + ":" + store.LedgerReserve, Kind: store.LedgerReserve, UserID: u.ID, Delta: -amount, CreatedAt: now},
					Open:  &store.Hold{Key: key, Owner: "node-a", UserID: u.ID, Amount: amount, CreatedAt: now}}
			}
			end := func(key, suffix, kind string, delta, used int64) store.BillingItem {
				return store.BillingItem{Close: key, Entry: &store.LedgerEntry{Key: key + ":" + suffix, Kind: kind, UserID: u.ID,
					Delta: delta, Used: used, CreatedAt: now}}
			}
			batches := [][]store.BillingItem{
				{reserve("paired", 100), end("paired", store.LedgerSettle, store.LedgerSettle, 70, 30)},
				{reserve("split", 100), reserve("kept", 100), reserve("released", 100), reserve("open", 100), reserve("refunded", 100)},
				{end("split", store.LedgerSettle, store.LedgerSettle, 30, 70), {Keep: "kept"},
					end("released", "release", store.LedgerRefund, 100, 0), end("refunded", store.LedgerRefund, store.LedgerRefund, 100, 0)},
			}
			for _, b := range batches {
				if _, err := s.WriteItems(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.HoldEnds(ctx, []string{"paired", "split", "kept", "released", "open", "refunded", "absent"})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]store.HoldEnd{"paired": {Settled: true, Charge: 30}, "split": {Settled: true, Charge: 70}, "kept": {Kept: true},
				"released": {Released: true}}
			for _, h := range []string{"paired", "split", "kept", "released", "open", "refunded", "absent"} {
				if got[h] != want[h] {
					t.Errorf("hold %s ended %+v, want %+v", h, got[h], want[h])
				}
			}
		})
	}
}
