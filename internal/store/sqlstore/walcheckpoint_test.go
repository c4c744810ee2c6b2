package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTheWALIsCheckpointedOnlyPastFourThousandPages holds the automatic
// checkpoint's threshold (wal_autocheckpoint in sqlitePragmas). Until a
// checkpoint copies them, committed pages live only in the WAL, so the
// database file stays at its size; past 4,000 frames the committing
// connection copies them and the file grows to hold them.
func TestTheWALIsCheckpointedOnlyPastFourThousandPages(t *testing.T) {
	cases := []struct {
		name       string
		pages      int // rows of one page each, committed 500 a transaction
		checkpoint bool
	}{
		{name: "2,000 committed pages stay in the WAL", pages: 2000, checkpoint: false},
		{name: "4,500 committed pages are copied to the database", pages: 4500, checkpoint: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "checkpoint.db")
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
			dbSize := func() int64 {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				return fi.Size()
			}
			before := dbSize()
			// 3,500 random bytes fill most of a 4 KiB page and cannot share one.
			fill := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) INSERT INTO pages SELECT randomblob(3500) FROM n"
			for range tc.pages / 500 {
				if _, err := st.db.ExecContext(ctx, fill); err != nil {
					t.Fatal(err)
				}
			}
			grown := dbSize() - before
			if copied := grown > 0; copied != tc.checkpoint {
				t.Errorf("after %d committed pages the database file grew by %d bytes: checkpointed = %v, want %v",
					tc.pages, grown, copied, tc.checkpoint)
			}
		})
	}
}
