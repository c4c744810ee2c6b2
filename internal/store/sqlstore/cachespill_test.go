package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestATransactionSpillsToTheWALOnlyPastFourMebibytes holds the page
// cache's spill threshold (cache_spill in sqlitePragmas): a transaction
// that dirties a few hundred pages, as a billing batch does, keeps them in
// memory until its commit writes them once, while a larger one still
// spills before its commit, so no transaction holds an unbounded cache.
// A spill shows as frames in a WAL that was empty when the transaction
// began.
func TestATransactionSpillsToTheWALOnlyPastFourMebibytes(t *testing.T) {
	cases := []struct {
		name  string
		pages int // rows of one page each
		spill bool
	}{
		{name: "a batch-sized transaction waits for its commit", pages: 400, spill: false},
		{name: "a transaction past 1,024 pages spills", pages: 3000, spill: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "spill.db")
			st, err := OpenStore(ctx, "sqlite:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.db.ExecContext(ctx, "CREATE TABLE pages (b BLOB NOT NULL)"); err != nil {
				t.Fatal(err)
			}
			if _, err := st.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				t.Fatal(err)
			}
			walSize := func() int64 {
				fi, err := os.Stat(path + "-wal")
				if err != nil {
					t.Fatal(err)
				}
				return fi.Size()
			}
			if n := walSize(); n != 0 {
				t.Fatalf("the WAL holds %d bytes after a truncating checkpoint", n)
			}
			tx, err := st.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			// 3,500 random bytes fill most of a 4 KiB page and cannot share one.
			fill := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO pages SELECT randomblob(3500) FROM n"
			if _, err := tx.ExecContext(ctx, fill, tc.pages); err != nil {
				t.Fatal(err)
			}
			if spilled := walSize() > 0; spilled != tc.spill {
				t.Errorf("after %d dirty pages, spilled before the commit = %v, want %v", tc.pages, spilled, tc.spill)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if want := int64(tc.pages) * 4096; walSize() < want {
				t.Errorf("after the commit the WAL holds %d bytes, want at least the %d of the rows' pages", walSize(), want)
			}
		})
	}
}
