package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// An older release (before schema 122) writes a price on the model's row
// only. Every node of this release must then charge that price, and the
// history must show it, as if it had been written here.
func TestPriceWrittenByAnOlderReleaseBecomesTheNextVersion(t *testing.T) {
	for name, open := range freshStores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ctx := context.Background()
			if err := s.Prices().Upsert(ctx, store.ModelPrice{Name: "m", InputPerMTok: 1, OutputPerMTok: 2}); err != nil {
				t.Fatal(err)
			}
			before, err := s.Prices().Revision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// What the release of schema 121 runs for PUT /api/models/m.
			olderWrite := s.Rebind("UPDATE model_prices SET input_per_mtok = ?, output_per_mtok = ?, updated_at = ? WHERE name = ?")
			if _, err := s.DB().ExecContext(ctx, olderWrite, 1500.0, 3000.0, now().Add(-time.Second), "m"); err != nil {
				t.Fatal(err)
			}
			after, err := s.Prices().Revision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.LastVersion == before.LastVersion {
				t.Fatalf("revision did not move after an older release's write: %+v", after)
			}
			got, err := s.Prices().Get(ctx, "m")
			if err != nil {
				t.Fatal(err)
			}
			if got.InputPerMTok != 1500 || got.OutputPerMTok != 3000 {
				t.Fatalf("price in effect = %v/%v, want the older node's 1500/3000", got.InputPerMTok, got.OutputPerMTok)
			}
			hist, err := s.Prices().History(ctx, "m")
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 2 || hist[0].Version != 2 || hist[0].Actor != priceActorOlderRelease {
				t.Fatalf("history = %+v, want version 2 by the older release on top of version 1", hist)
			}
			// Adopted once: reading again adds nothing, and a write of this
			// release afterwards is not mistaken for an older one.
			if err := s.Prices().Upsert(ctx, store.ModelPrice{Name: "m", InputPerMTok: 7, OutputPerMTok: 8}); err != nil {
				t.Fatal(err)
			}
			if hist, _ = s.Prices().History(ctx, "m"); len(hist) != 3 || hist[0].InputPerMTok != 7 {
				t.Fatalf("history after a new write = %+v, want three versions, newest 7", hist)
			}
		})
	}
}

// A model an older release created after the migration has no version;
// it gets version 1 so its history and the snapshot agree.
func TestModelCreatedByAnOlderReleaseGetsItsFirstVersion(t *testing.T) {
	s := openTest(t, "sqlite:"+t.TempDir()+"/x.db").(*Store)
	ctx := context.Background()
	_, err := s.DB().ExecContext(ctx, `INSERT INTO model_prices (name, input_per_mtok, output_per_mtok, cache_read_per_mtok,
		cache_write_per_mtok, per_call, is_free, updated_at) VALUES ('old', 3, 4, 0, 0, 0, 0, ?)`, now())
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Prices().Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 0 {
		t.Fatalf("versions before any read = %+v", vs)
	}
	if _, err := s.Prices().List(ctx); err != nil {
		t.Fatal(err)
	}
	if vs, _ = s.Prices().Versions(ctx); len(vs) != 1 || vs[0].Version != 1 || vs[0].InputPerMTok != 3 {
		t.Fatalf("versions after a list = %+v, want version 1 at 3", vs)
	}
}
