package sqlstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestHealthRecordsChangeOnlyFromTheVersionRead(t *testing.T) {
	for dialect, open := range freshStores(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			repo := open(t).Health()
			at := time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
			rec := store.ChannelHealth{ChannelID: 7, KeyIndex: 0, State: "cooling", Reason: "500: boom", Since: at,
				Until: at.Add(10 * time.Second), Cooldown: 10 * time.Second}
			if ok, err := repo.Swap(ctx, rec, 0); !ok || err != nil {
				t.Fatalf("first insert: %v %v", ok, err)
			}
			if ok, err := repo.Swap(ctx, rec, 0); ok || err != nil {
				t.Fatalf("a second node inserting the same key: %v %v, want lost race", ok, err)
			}
			rec.State, rec.Until, rec.NextProbe = "auto_disabled", time.Time{}, at.Add(time.Minute)
			if ok, err := repo.Swap(ctx, rec, 1); !ok || err != nil {
				t.Fatalf("update from version 1: %v %v", ok, err)
			}
			if ok, _ := repo.Swap(ctx, rec, 1); ok {
				t.Fatal("an update from a stale version won")
			}
			all, err := repo.All(ctx)
			if err != nil || len(all) != 1 {
				t.Fatalf("all: %v %v", all, err)
			}
			got := all[0]
			if got.Version != 2 || got.State != "auto_disabled" || !got.Since.Equal(at) || !got.Until.IsZero() ||
				!got.NextProbe.Equal(at.Add(time.Minute)) || got.Cooldown != 10*time.Second || got.Reason != "500: boom" {
				t.Fatalf("read back %+v", got)
			}
			next := at.Add(2 * time.Minute)
			if ok, err := repo.LeaseProbe(ctx, 7, 0, got.NextProbe, next); !ok || err != nil {
				t.Fatalf("lease: %v %v", ok, err)
			}
			if ok, _ := repo.LeaseProbe(ctx, 7, 0, got.NextProbe, next); ok {
				t.Fatal("a second node leased the same probe")
			}
			if err := repo.Reset(ctx, 7, "reset by an administrator", next); err != nil {
				t.Fatal(err)
			}
			if all, _ := repo.All(ctx); len(all) != 1 || all[0].State != "healthy" || all[0].Version != 3 || !all[0].NextProbe.IsZero() {
				t.Fatalf("after reset: %+v", all)
			}
			if err := repo.Delete(ctx, 7); err != nil {
				t.Fatal(err)
			}
			if all, _ := repo.All(ctx); len(all) != 0 {
				t.Fatalf("after delete: %v", all)
			}
		})
	}
}

func TestPriceFallbacksRoundTrip(t *testing.T) {
	for dialect, open := range freshStores(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			if err := s.Prices().Upsert(ctx, store.ModelPrice{Name: "a", InputPerMTok: 1, Fallbacks: []string{"b", "c"}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Prices().Upsert(ctx, store.ModelPrice{Name: "b", InputPerMTok: 1}); err != nil {
				t.Fatal(err)
			}
			a, _ := s.Prices().Get(ctx, "a")
			b, _ := s.Prices().Get(ctx, "b")
			if strings.Join(a.Fallbacks, ",") != "b,c" || b.Fallbacks != nil {
				t.Fatalf("fallbacks %v and %v", a.Fallbacks, b.Fallbacks)
			}
		})
	}
}

// TestPriceWrittenWithoutTheTierColumnsChargesAsBefore covers a node of the
// previous release writing a price during a rolling upgrade: its row names
// neither new column, and reads back with no reasoning price and no tiers.
func TestPriceWrittenWithoutTheTierColumnsChargesAsBefore(t *testing.T) {
	for dialect, open := range freshStores(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			_, err := s.DB().ExecContext(ctx, s.Rebind("INSERT INTO model_prices (name, input_per_mtok, output_per_mtok, cache_read_per_mtok, "+
				"cache_write_per_mtok, per_call, is_free, extra, updated_at, fallbacks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
				"old", 1.5, 2, 0, 0, 0, false, nil, time.Now().UTC(), nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Prices().Get(ctx, "old")
			if err != nil {
				t.Fatal(err)
			}
			if p.InputPerMTok != 1.5 || p.OutputPerMTok != 2 || p.ReasoningPerMTok != 0 || p.Tiers != nil {
				t.Fatalf("got %+v", *p)
			}
		})
	}
}
