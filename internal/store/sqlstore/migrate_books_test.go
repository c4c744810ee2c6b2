package sqlstore

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// booksSums are a store's ledger and row totals of w, one line each.
func booksSums(t *testing.T, s *Store, w store.Window) string {
	t.Helper()
	ledger, err := s.Books().LedgerTotals(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.Books().LogTotals(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ledger {
		out = append(out, fmt.Sprintf("%+v", l))
	}
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%+v", r))
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// An upgrade from a database without the books rollups: migration 210
// sums the entries and rows there are, and an entry a node of the earlier
// release writes afterwards carries the mark, is counted by the readers
// while it waits and is folded once by the catch-up.
func TestUpgradeSumsTheBooksRollupsAndCatchesUpEntriesWrittenWithoutThem(t *testing.T) {
	dsns := upgradeDatabases(t)
	if base := os.Getenv("TURNPIKE_TEST_MYSQL"); base != "" {
		dsns["mysql"] = testdb.MySQL(t, base)
	}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openConcrete(t, dsn)
			day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			insertDayRows(t, s, day, 40)
			var entries []store.LedgerEntry
			for i := range 40 {
				kind, key := store.LedgerSettle, fmt.Sprintf("call-%d:reserve", i)
				if i%4 == 1 {
					kind = store.LedgerReserve
				}
				entries = append(entries, store.LedgerEntry{Key: key, Kind: kind, UserID: 1, TokenID: int64(1 + i%2), Delta: int64(-10 - i),
					TokenDelta: int64(-10 - i), Used: int64(i), CreatedAt: day.Add(time.Duration(i) * 71 * time.Minute)})
			}
			if err := s.Ledger().Apply(ctx, entries); err != nil {
				t.Fatal(err)
			}
			whole := store.Window{Since: day, Until: day.Add(48 * time.Hour)}
			cut := store.Window{Since: day.Add(5 * time.Hour), Until: day.Add(30 * time.Hour)}
			wantWhole, wantCut := booksSums(t, s, whole), booksSums(t, s, cut)
			undo := []string{"DROP TABLE ledger_rollups_daily", "DROP TABLE usage_books_daily", "DROP INDEX quota_ledger_rollup_pending_idx",
				"ALTER TABLE quota_ledger DROP COLUMN rollup_pending", "DELETE FROM schema_migrations WHERE version = 210"}
			if s.dialect == MySQL {
				undo[2] = "DROP INDEX quota_ledger_rollup_pending_idx ON quota_ledger"
			}
			undoMigration(t, s, undo)
			again := openConcrete(t, dsn)
			if got := booksSums(t, again, whole); got != wantWhole || len(got) < 100 {
				t.Fatalf("books over whole days after the upgrade\n got %s\nwant %s", got, wantWhole)
			}
			if got := booksSums(t, again, cut); got != wantCut {
				t.Fatalf("books over cut days after the upgrade\n got %s\nwant %s", got, wantCut)
			}
			// A node of the earlier release writes an entry: it names no mark.
			if _, err := again.DB().ExecContext(ctx, again.Rebind("INSERT INTO quota_ledger (idem_key, kind, user_id, token_id, delta, token_delta, used, "+
				"created_at, team_id) VALUES ('old-node', 'topup', 1, 0, 500, 0, 0, ?, 0)"), dbTime(day.Add(12*time.Hour))); err != nil {
				t.Fatal(err)
			}
			waiting := booksSums(t, again, whole)
			if waiting == wantWhole {
				t.Fatal("the marked entry is not counted while it waits for the catch-up")
			}
			for more := true; more; {
				var err error
				if more, err = again.Rollups().Backfill(ctx, 1); err != nil {
					t.Fatal(err)
				}
			}
			var marked int
			if err := again.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM quota_ledger WHERE rollup_pending = 1").Scan(&marked); err != nil || marked != 0 {
				t.Fatalf("%d entries still marked after the catch-up (%v)", marked, err)
			}
			if got := booksSums(t, again, whole); got != waiting {
				t.Fatalf("books after the catch-up\n got %s\nwant %s (the entry counted once)", got, waiting)
			}
		})
	}
}
